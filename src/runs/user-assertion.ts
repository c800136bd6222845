import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTPayload, jwtVerify } from "jose";
import { loadConfig } from "../config/load";
import type { UserIdentity } from "../config/user-identity";
import type { Env } from "../env";
import { requestContext } from "../http/respond";
import type { Envelope } from "../wire/envelope";
import { failure } from "../wire/envelope";
import type { RunUser } from "../wire/run-user";
import { providerKeys } from "./user-keys";

/**
 * The user a run acts for, from the assertion its opener presented in `X-User-Assertion` (a JWT of
 * the tenant's identity provider): verified against the tenant's issuer, audience and keys, unexpired
 * within the tenant's clock skew. Only the opener's header names a user: no body field and no tool
 * argument can, so nothing a model sends sets or changes it.
 */
export const USER_ASSERTION_HEADER = "x-user-assertion";

/** Signatures an identity provider's assertion may carry: asymmetric only, so no shared secret can forge one. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];

/** Claims that say who issued the assertion and when: never offered to policies as the user's. */
const REGISTERED = new Set(["iss", "sub", "aud", "exp", "nbf", "iat", "jti", "name", "act", "scope"]);
/** At most this many of the assertion's own claims are kept with the run, each string at most this long. */
const MAX_CLAIMS = 32;
const MAX_CLAIM_CHARS = 256;

export type UserAnswer = { ok: true; user: RunUser | null } | { ok: false; envelope: Envelope };

/**
 * The run's user for an open by `tenantId` with `assertion` (the header's value, if any): null when
 * none was presented and the tenant does not require one; a 401 envelope (`permission_error`) when
 * one is required and missing, or presented and not valid. `ownHost` is the proxy's own host, never
 * fetched for keys.
 */
export async function verifyUserAssertion(
  env: Env,
  tenantId: string,
  assertion: string | undefined,
  ownHost: string,
  now: number = Date.now(),
): Promise<UserAnswer> {
  const users = loadConfig(env).tenants[tenantId]?.users;
  const refuse = (message: string): UserAnswer => ({
    ok: false,
    envelope: failure(requestContext(env), {
      code: "permission_error",
      message: `${message} Nothing was opened.`,
      recommended_next_action: "escalate_to_human",
      details: { header: "X-User-Assertion" },
    }),
  });
  if (assertion === undefined || assertion.trim() === "") {
    if (users?.required)
      return refuse(
        "This tenant's runs act for a user: send X-User-Assertion, a JWT of the tenant's identity provider.",
      );
    return { ok: true, user: null };
  }
  if (!users)
    return refuse(
      "This tenant names no identity provider, so the X-User-Assertion presented cannot be verified.",
    );
  const keys = await providerKeys(env, users, ownHost);
  if (!keys)
    return refuse(
      "The identity provider's keys could not be fetched, so the user assertion cannot be verified now; try again later.",
    );
  const verified = await verifyWith(assertion.trim(), keys, users, now);
  if (!verified.ok) return refuse(`The user assertion was refused: ${verified.reason}.`);
  return { ok: true, user: userOf(verified.payload) };
}

async function verifyWith(
  token: string,
  keys: JSONWebKeySet,
  users: UserIdentity,
  now: number,
): Promise<{ ok: true; payload: JWTPayload } | { ok: false; reason: string }> {
  try {
    const { payload } = await jwtVerify(token, createLocalJWKSet(keys), {
      algorithms: ALGORITHMS,
      issuer: users.issuer,
      audience: users.audience,
      clockTolerance: users.clock_skew_s,
      currentDate: new Date(now),
      requiredClaims: ["sub", "exp"],
    });
    return { ok: true, payload };
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
