// Prints a new Ed25519 signing key, as the private JWK that goes into one of the proxy's key
// arrays, and its public half (what the proxy will publish):
//
//   node scripts/new-upstream-signing-key.mjs [kid]            for UPSTREAM_SIGNING_KEYS (upstream
//                                                             credentials; /.well-known/jwks.json),
//                                                             kid defaults to upstream-<today>
//   node scripts/new-upstream-signing-key.mjs --audit [kid]    for AUDIT_SIGNING_KEYS (audit receipts;
//                                                             /.well-known/audit-jwks.json),
//                                                             kid defaults to audit-<today>
//
// The private JWK is a secret: put it in the secret store, never in a file you commit.
import { exportJWK, generateKeyPair } from "jose";

const args = process.argv.slice(2);
const audit = args[0] === "--audit";
const kind = audit
  ? { secret: "AUDIT_SIGNING_KEYS", prefix: "audit", readers: "receipt verifiers" }
  : { secret: "UPSTREAM_SIGNING_KEYS", prefix: "upstream", readers: "upstreams" };
const kid = (audit ? args[1] : args[0]) ?? `${kind.prefix}-${new Date().toISOString().slice(0, 10)}`;
if (!/^[A-Za-z0-9._-]{1,64}$/.test(kid)) {
  console.error("new-upstream-signing-key: a kid is 1-64 characters of A-Z a-z 0-9 . _ -");
  process.exit(1);
}

const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
const { kty, crv, x, d } = await exportJWK(privateKey);
console.log(`private JWK (a secret: one element of ${kind.secret}):`);
console.log(JSON.stringify({ kty, crv, alg: "EdDSA", kid, x, d }));
console.log(`public JWK (what ${kind.readers} pin or fetch):`);
console.log(JSON.stringify({ kty, crv, kid, x, alg: "EdDSA", use: "sig" }));
