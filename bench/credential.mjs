// Mints the per-dispatch upstream credential the proxy would send, so the benchmark can call the
// sandbox directly. Same format as src/upstream/credential.ts: a JWT signed with EdDSA by the first
// of the proxy's UPSTREAM_SIGNING_KEYS (from the local .dev.vars), which the sandbox verifies against
// the public keys it pins in UPSTREAM_JWKS.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { importJWK, SignJWT } from "jose";
import { root } from "../scripts/local-stack.mjs";

function signingKey() {
  const name = "UPSTREAM_SIGNING_KEYS=";
  const line = readFileSync(join(root, ".dev.vars"), "utf8")
    .split("\n")
    .find((entry) => entry.startsWith(name));
  if (!line) throw new Error(`.dev.vars has no ${name.slice(0, -1)}: delete it to have it recreated`);
  return JSON.parse(line.slice(name.length))[0];
}

/** `claims`: `{ tenant, run, tool, exp }`, exp in epoch milliseconds, as the proxy issues them. */
export async function mintUpstreamCredential({ tenant, run, tool, exp }) {
  const { kty, crv, x, d, kid } = signingKey();
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
