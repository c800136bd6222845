import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTPayload, jwtVerify } from "jose";
import type { UserIdentity } from "../config/user-identity";
import type { RunUser } from "../wire/run-user";

/**
 * Checking a user assertion's JWT (user-assertion.ts decides when one is needed): its signature
 * with the identity provider's keys, its issuer, audience and expiry, and the user it names. A
 * module of its own so that jose's JWT checks load only for an open that presents an assertion.
 */

/** Signatures an identity provider's assertion may carry: asymmetric only, so no shared secret can forge one. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];

/** Claims that say who issued the assertion and when: never offered to policies as the user's. */
const REGISTERED = new Set(["iss", "sub", "aud", "exp", "nbf", "iat", "jti", "name", "act", "scope"]);
/** At most this many of the assertion's own claims are kept with the run, each string at most this long. */
const MAX_CLAIMS = 32;
const MAX_CLAIM_CHARS = 256;

/** The assertion checked with the provider's keys: the user it names, or why it was refused. */
export async function verifyAssertion(
  token: string,
  keys: JSONWebKeySet,
  users: UserIdentity,
  now: number,
): Promise<{ ok: true; user: RunUser } | { ok: false; reason: string }> {
  try {
    const { payload } = await jwtVerify(token, createLocalJWKSet(keys), {
      algorithms: ALGORITHMS,
      issuer: users.issuer,
      audience: users.audience,
      clockTolerance: users.clock_skew_s,
      currentDate: new Date(now),
      requiredClaims: ["sub", "exp"],
    });
    return { ok: true, user: userOf(payload) };
  } catch (error) {
    return { ok: false, reason: reasonOf(error) };
  }
}

/** Why jose refused, in words an orchestrator can act on (never the token itself). */
function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "it has expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "iss") return "it was issued by another identity provider than this tenant's";
    if (error.claim === "aud") return "it is for another audience than this tenant's";
    if (error.claim === "nbf") return "it is not valid yet";
    return `its ${error.claim} claim is missing or invalid`;
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWSSignatureVerificationFailed)
    return "its signature does not verify with the identity provider's keys";
  if (error instanceof errors.JOSEAlgNotAllowed) return "it is signed with an algorithm that is not accepted";
  return "it is not a valid JWT";
}

/** The run's user from a verified assertion: subject, issuer, display name and bounded scalar claims. */
function userOf(payload: JWTPayload): RunUser {
  const claims: RunUser["claims"] = {};
  for (const [name, value] of Object.entries(payload)) {
    if (REGISTERED.has(name) || Object.keys(claims).length >= MAX_CLAIMS) continue;
    if (typeof value === "number" || typeof value === "boolean") claims[name] = value;
    else if (typeof value === "string" && value.length <= MAX_CLAIM_CHARS) claims[name] = value;
  }
  return {
    sub: String(payload.sub),
    iss: String(payload.iss),
    name: typeof payload.name === "string" ? payload.name.slice(0, MAX_CLAIM_CHARS) : null,
    claims,
  };
}
