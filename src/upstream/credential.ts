// jose by subpath: the MCP client SDK imports the package's whole namespace on first use, and a
// split build (scripts/build-worker.mjs) would otherwise start every isolate with all of it.
import * as errors from "jose/errors";
import { SignJWT } from "jose/jwt/sign";
import { type JWTVerifyGetKey, jwtVerify } from "jose/jwt/verify";
import { importJWK } from "jose/key/import";
import * as z from "zod";
import type { StaticCredential } from "../catalog/define-tool";
import { UPSTREAM_CREDENTIAL_ALG, type UpstreamSigningKey } from "../config/signing-keys";
import { lazily } from "../core/lazily";

/**
 * The per-dispatch credential the proxy presents to an upstream: a JWT (RFC 7519) signed with the
 * proxy's Ed25519 key. The agent never sees it, nor the key that signs it; it expires seconds after
 * its dispatch, so a leaked one is worth seconds of one tool of one run.
 *
 * It is good for one request: besides `iss` the proxy, `sub` the tenant, `aud` the tool (one string),
 * `run` the run id, `exp` and `iat` in whole seconds and `jti` a random id (header `kid` names the
 * signing key), it names the request it was issued for: `htm` its method, `htu` its target (path
 * and query, relative to the upstream's base), `body_sha256` the base64url SHA-256 of its body
 * bytes (of the empty string when it has none) and `idempotency_key` the key it carries (null for a
 * read). An upstream that checks them refuses any other use of a leaked credential: another amount,
 * another key, another endpoint of the same tool. `exp` is never later than the run's deadline.
 * sandbox/API.md documents the claims for real upstreams to check.
 */

/**
 * What a dispatch carries to prove it comes from the proxy: a header (the JWT, or a declared static
 * key), or a declared static key in a query parameter. Either is added to each attempt as it is sent
 * (`attach-credential.ts`), never to the request stored under the call's key.
 */
export type UpstreamAuthorization = { header: string; value: string } | { query: string; value: string };

/** The proxy's JWT as the header it travels in. */
export function bearer(token: string): UpstreamAuthorization {
  return { header: "authorization", value: `Bearer ${token}` };
}

/**
 * Thrown when a tool's declared static header names a Workers secret this environment lacks. The
 * proxy never sends another kind of credential in its place: a call answers `configuration_error`
 * before anything is sent (`unsentWithoutSecret` of `authorize.ts`), and this guards every other way
 * to a dispatch.
 */
export class MissingSecretError extends Error {
  override name = "MissingSecretError";
  constructor(readonly secret: string) {
    super(`secret ${secret} is not set; nothing is sent in its place`);
  }
}

/** The secret a declared static header or query key names, when this environment lacks it (unset or blank); else null. */
export function missingSecret(credential: StaticCredential | undefined, env: object): string | null {
  if (!credential) return null;
  const secret = (env as Record<string, unknown>)[credential.secret];
  return typeof secret === "string" && secret.trim() !== "" ? null : credential.secret;
}

/**
 * The static key of an upstream that takes only an API key (declared `static_header` or
 * `static_query`), its value read from the named Workers secret; null when the tool declares none (the proxy's JWT, or
 * nothing, is then its credential). A declared header whose secret is not set throws
 * MissingSecretError: never the JWT instead, which such an upstream would only refuse after the
 * call was sent. Production refuses to start without it anyway (`missingUpstreamSecrets`).
 */
export function staticAuthorization(
  credential: StaticCredential | undefined,
  env: object,
): UpstreamAuthorization | null {
  if (!credential) return null;
  if (missingSecret(credential, env) !== null) throw new MissingSecretError(credential.secret);
  const secret = String((env as Record<string, unknown>)[credential.secret]);
  if (credential.kind === "static_query") return { query: credential.param, value: secret };
  return { header: credential.header, value: `${credential.prefix}${secret}` };
}

/** The `iss` of every upstream credential. */
export const UPSTREAM_CREDENTIAL_ISSUER = "edge-tool-proxy";

/** The one request a credential is good for, as the proxy sends it and the upstream receives it. */
export interface CredentialRequest {
  method: string;
  /** Path and query, such as `/orders/A1001?expand=refunds`. */
  target: string;
  body: string | null;
  idempotency_key: string | null;
}

/** What the proxy asserts for one dispatch. `exp` is epoch milliseconds, rounded down to the second. */
export interface UpstreamCredential {
  tenant: string;
  run: string;
  tool: string;
  exp: number;
  request: CredentialRequest;
  /**
   * The user the run acts for, as the `act` claim carries it (RFC 8693's actor claim: `sub` and
   * `iss` of the user at the tenant's identity provider), so an upstream can authorize per user;
   * null or absent: the run names no user, and the credential has no `act`.
   */
  user?: CredentialUser | null;
}

/** Whom a credential's request is made for: the user's subject and identity provider. */
export interface CredentialUser {
  sub: string;
  iss: string;
}

/** A credential that verified: its claims, with times in epoch milliseconds like the rest of the code. */
export interface VerifiedUpstreamCredential extends Omit<UpstreamCredential, "request"> {
  iat: number;
  jti: string;
  kid: string;
}

/** The claims set after the signature checked out; anything else is `malformed`. */
const upstreamCredentialClaimsSchema = lazily(() =>
  z.object({
    iss: z.literal(UPSTREAM_CREDENTIAL_ISSUER),
    sub: z.string().min(1),
    aud: z.string().min(1),
    run: z.string().min(1),
    exp: z.number().int(),
    iat: z.number().int(),
    jti: z.string().min(1),
    htm: z.string().min(1),
    htu: z.string().startsWith("/"),
    body_sha256: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
    idempotency_key: z.string().min(1).nullable(),
    act: z.object({ sub: z.string().min(1), iss: z.string().min(1) }).optional(),
  }),
);

export type CredentialRejection =
  | "malformed"
  | "bad_signature"
  | "unknown_key"
  | "expired"
  | "wrong_audience"
  /** Signed for another request: another method, target, body or idempotency key. */
  | "wrong_request";

export type CredentialVerification =
  | { ok: true; credential: VerifiedUpstreamCredential }
  | { ok: false; reason: CredentialRejection };

const signingKeys = new Map<string, Promise<CryptoKey>>();

/** Imported once per isolate and key, and never extractable once imported. */
function signingKeyOf(key: UpstreamSigningKey): Promise<CryptoKey> {
  const id = `${key.kid}.${key.x}`;
  let imported = signingKeys.get(id);
  if (!imported) {
    const { kty, crv, x, d } = key;
    imported = importJWK({ kty, crv, x, d }, UPSTREAM_CREDENTIAL_ALG, {
      extractable: false,
    }) as Promise<CryptoKey>;
    signingKeys.set(id, imported);
  }
  return imported;
}

const seconds = (ms: number) => Math.floor(ms / 1_000);

/** The base64url SHA-256 of a request's body bytes; a request without a body hashes the empty string. */
export async function bodyDigest(body: string | null): Promise<string> {
  if (body !== null && body !== "") return sha256Base64url(body);
  // Every GET's is the empty string's: hashed once per isolate, for the signer and the verifier
  // alike. The value is kept, not the promise, so no request awaits a promise another one made.
  emptyBodyDigest ??= await sha256Base64url("");
  return emptyBodyDigest;
}

let emptyBodyDigest: string | undefined;

async function sha256Base64url(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return btoa(String.fromCharCode(...digest))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** A credential outlives its request by this much at most: clock skew and the upstream's own work. */
export const CREDENTIAL_MARGIN_MS = 2_000;

/**
 * When a credential for a request of at most `timeoutMs` expires: the request's time plus the
 * margin, rounded down to the whole second a JWT's `exp` holds, which still leaves at least a second
 * beyond the request. Every credential the proxy signs (dispatches, the console's reads) uses it.
 */
export function credentialExpiry(now: number, timeoutMs: number): number {
  return Math.floor((now + timeoutMs + CREDENTIAL_MARGIN_MS) / 1_000) * 1_000;
}

/**
 * Signs a credential with the first of `keys`; the others are only published, so credentials they
 * signed earlier keep verifying through a rotation.
 *
 * @example
 * const token = await issueUpstreamCredential(
 *   {
 *     tenant: "acme", run: "run_1", tool: "lookup_order", exp: Date.now() + 4_500,
 *     request: { method: "GET", target: "/orders/A1001", body: null, idempotency_key: null },
 *   },
 *   loadConfig(env).upstreamSigningKeys,
 * );
 */
export async function issueUpstreamCredential(
  credential: UpstreamCredential,
  keys: readonly UpstreamSigningKey[],
  now: number = Date.now(),
): Promise<string> {
  const key = keys[0];
  if (!key) throw new Error("cannot sign an upstream credential: no signing key configured");
  const { request } = credential;
  return new SignJWT({
    run: credential.run,
    htm: request.method,
    htu: request.target,
    body_sha256: await bodyDigest(request.body),
    idempotency_key: request.idempotency_key,
    ...(credential.user ? { act: { sub: credential.user.sub, iss: credential.user.iss } } : {}),
  })
    .setProtectedHeader({ alg: UPSTREAM_CREDENTIAL_ALG, kid: key.kid, typ: "JWT" })
    .setIssuer(UPSTREAM_CREDENTIAL_ISSUER)
    .setSubject(credential.tenant)
    .setAudience(credential.tool)
    .setIssuedAt(seconds(now))
    .setExpirationTime(seconds(credential.exp))
    .setJti(crypto.randomUUID())
    .sign(await signingKeyOf(key));
}

/**
 * The upstream's side, with public keys only: `keys` is a JWK Set resolver (jose's
 * `createLocalJWKSet` for a pinned set, `createRemoteJWKSet` for the proxy's endpoint). The
 * credential must be signed by one of them with EdDSA, come from the proxy, be for `tool`, be
 * unexpired, and name the very request it arrived with (`expected.request`). No clock tolerance: the proxy and its upstreams share the edge's clock, and a credential
 * already outlives its dispatch by a second or two.
 */
export async function verifyUpstreamCredential(
  token: string,
  keys: JWTVerifyGetKey,
  expected: { tool: string; request: CredentialRequest; now?: number },
): Promise<CredentialVerification> {
  try {
    const { payload, protectedHeader } = await jwtVerify(token, keys, {
      algorithms: [UPSTREAM_CREDENTIAL_ALG],
      issuer: UPSTREAM_CREDENTIAL_ISSUER,
      audience: expected.tool,
      requiredClaims: ["sub", "run", "exp", "iat", "jti", "htm", "htu", "body_sha256"],
      ...(expected.now === undefined ? {} : { currentDate: new Date(expected.now) }),
    });
    const claims = upstreamCredentialClaimsSchema().safeParse(payload);
    if (!claims.success || !protectedHeader.kid) return { ok: false, reason: "malformed" };
    const { sub, aud, run, exp, iat, jti, act } = claims.data;
    if (!(await sameRequest(claims.data, expected.request))) return { ok: false, reason: "wrong_request" };
    return {
      ok: true,
      credential: {
        tenant: sub,
        run,
        tool: aud,
        exp: exp * 1_000,
        iat: iat * 1_000,
        jti,
        kid: protectedHeader.kid,
        user: act ? { sub: act.sub, iss: act.iss } : null,
      },
    };
  } catch (error) {
    return { ok: false, reason: rejectionOf(error) };
  }
}

async function sameRequest(
  claims: { htm: string; htu: string; body_sha256: string; idempotency_key: string | null },
  request: CredentialRequest,
): Promise<boolean> {
  return (
    claims.htm === request.method.toUpperCase() &&
    claims.htu === request.target &&
    claims.idempotency_key === request.idempotency_key &&
    claims.body_sha256 === (await bodyDigest(request.body))
  );
}

/** Why jose refused a token, in the verifier's few words. Anything unexpected is `malformed`. */
function rejectionOf(error: unknown): CredentialRejection {
  // Signed by no key of the set: retired and removed, or never the proxy's.
  if (error instanceof errors.JWKSNoMatchingKey) return "unknown_key";
  // A listed kid but another key's signature, an altered header or payload, or an algorithm other
  // than EdDSA (`none`, or HS256 keyed with the public key).
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JOSEAlgNotAllowed) {
    return "bad_signature";
  }
  if (error instanceof errors.JWTExpired) return "expired";
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === "aud") return "wrong_audience";
  return "malformed";
}
