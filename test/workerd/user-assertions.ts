import { importJWK, type JWK, SignJWT } from "jose";

/**
 * Assertions of wayne's identity provider, as an orchestrator receives them from it. The key below
 * is a test key pair made for this fixture only: wrangler.toml's sandbox tenant `wayne` lists its
 * public half; nothing anywhere else trusts it.
 */
const WAYNE_IDP_TEST_KEY: JWK = {
  kty: "EC",
  crv: "P-256",
  x: "v9tM4MJBHy1S0qyHGKxcaLClUJhOoA5mg1AOzyzYcJE",
  y: "tJ8MjjgahuD3Wh3XNrSsYMJY8LggkQ009OV5RrxKzqY",
  d: "GgCidNwFep2Wak_FCAU-LiUqyJyu7zi3n3T9lufgeLc",
};
export const WAYNE_ISSUER = "https://idp.wayne.example";
const AUDIENCE = "edge-tool-proxy";

export interface AssertionOptions {
  issuer?: string;
  audience?: string;
  /** Seconds from now; negative: already expired. */
  expiresIn?: number;
  /** Another key than the provider's, under the provider's kid: a forgery. */
  key?: CryptoKey;
}

/** A signed assertion naming `sub` with `claims` (such as refund_limit_cents). */
export async function userAssertion(
  sub: string,
  claims: Record<string, unknown> = {},
  options: AssertionOptions = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const key = options.key ?? ((await importJWK(WAYNE_IDP_TEST_KEY, "ES256")) as CryptoKey);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "ES256", kid: "wayne-idp-1", typ: "JWT" })
    .setIssuer(options.issuer ?? WAYNE_ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setSubject(sub)
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresIn ?? 600))
    .sign(key);
}

/** A key no provider of any tenant lists: what a forger signs with. */
export async function forgerKey(): Promise<CryptoKey> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  return pair.privateKey;
}
