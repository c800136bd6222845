// Mints the per-dispatch upstream credential the proxy would send, so the benchmark can call the
// sandbox directly. Same format as src/upstream/credential.ts: a JWT signed with EdDSA by the first
// of the proxy's UPSTREAM_SIGNING_KEYS, which the sandbox verifies against the public keys it pins
// in UPSTREAM_JWKS, good for the one request it names (method, target, body digest, key).
import { importJWK, SignJWT } from "jose";

/**
 * `claims`: `{ tenant, run, tool, exp, request }`, exp in epoch milliseconds, request
 * `{ method, target, body, idempotency_key }`, as the proxy issues them;
 * `signingKeys`: the proxy's UPSTREAM_SIGNING_KEYS secret as given to the proxy (a JSON list of JWKs).
 *
 * @example
 *   const request = { method: "GET", target: "/orders/I3001", body: null, idempotency_key: null };
 *   await mintUpstreamCredential({ tenant: "initech", run: "bench", tool: "lookup_order", exp, request }, keys);
 */
export async function mintUpstreamCredential({ tenant, run, tool, exp, request }, signingKeys) {
  const { kty, crv, x, d, kid } = JSON.parse(signingKeys)[0];
  const key = await importJWK({ kty, crv, x, d }, "EdDSA");
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(request.body ?? "")),
  );
  return new SignJWT({
    run,
    htm: request.method,
    htu: request.target,
    body_sha256: Buffer.from(digest).toString("base64url"),
    idempotency_key: request.idempotency_key,
  })
    .setProtectedHeader({ alg: "EdDSA", kid, typ: "JWT" })
    .setIssuer("edge-tool-proxy")
    .setSubject(tenant)
    .setAudience(tool)
    .setIssuedAt()
    .setExpirationTime(Math.floor(exp / 1000))
    .setJti(crypto.randomUUID())
    .sign(key);
}
