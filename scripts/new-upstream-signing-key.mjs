// Prints a new Ed25519 signing key for upstream credentials, as the private JWK that goes into the
// proxy's UPSTREAM_SIGNING_KEYS array, and its public half (what /.well-known/jwks.json will serve).
//
//   node scripts/new-upstream-signing-key.mjs [kid]      kid defaults to upstream-<today>
//
// The private JWK is a secret: put it in the secret store, never in a file you commit.
import { exportJWK, generateKeyPair } from "jose";

const kid = process.argv[2] ?? `upstream-${new Date().toISOString().slice(0, 10)}`;
if (!/^[A-Za-z0-9._-]{1,64}$/.test(kid)) {
  console.error("new-upstream-signing-key: a kid is 1-64 characters of A-Z a-z 0-9 . _ -");
  process.exit(1);
}

const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
const { kty, crv, x, d } = await exportJWK(privateKey);
console.log("private JWK (a secret: one element of UPSTREAM_SIGNING_KEYS):");
console.log(JSON.stringify({ kty, crv, alg: "EdDSA", kid, x, d }));
console.log("public JWK (what upstreams pin or fetch):");
console.log(JSON.stringify({ kty, crv, kid, x, alg: "EdDSA", use: "sig" }));
