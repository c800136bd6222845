// Mints the per-dispatch upstream credential the proxy would send, so the benchmark can call the
// sandbox directly. Same format as src/upstream/credential.ts: a JWT signed with EdDSA by the first
// of the proxy's UPSTREAM_SIGNING_KEYS, which the sandbox verifies against the public keys it pins
// in UPSTREAM_JWKS.
import { importJWK, SignJWT } from "jose";

/**
 * `claims`: `{ tenant, run, tool, exp }`, exp in epoch milliseconds, as the proxy issues them;
 * `signingKeys`: the proxy's UPSTREAM_SIGNING_KEYS secret as given to the proxy (a JSON list of JWKs).
 *
 * @example
 *   await mintUpstreamCredential({ tenant: "initech", run: "bench", tool: "lookup_order", exp }, keys);
 */
export async function mintUpstreamCredential({ tenant, run, tool, exp }, signingKeys) {
  const { kty, crv, x, d, kid } = JSON.parse(signingKeys)[0];
  const key = await importJWK({ kty, crv, x, d }, "EdDSA");
  return new SignJWT({ run })
    .setProtectedHeader({ alg: "EdDSA", kid, typ: "JWT" })
    .setIssuer("edge-tool-proxy")
    .setSubject(tenant)
    .setAudience(tool)
    .setIssuedAt()
    .setExpirationTime(Math.floor(exp / 1000))
    .setJti(crypto.randomUUID())
    .sign(key);
}
