import { env } from "cloudflare:workers";
import { decodeJwt, exportJWK, generateKeyPair } from "jose";
import {
  parseUpstreamSigningKeys,
  UPSTREAM_CREDENTIAL_ALG,
  type UpstreamSigningKey,
} from "../../src/config/signing-keys";

/** The proxy's configured signing keys (.dev.vars.example): the current one first, then the retired one. */
export function configuredSigningKeys(): UpstreamSigningKey[] {
  return parseUpstreamSigningKeys("UPSTREAM_SIGNING_KEYS", env.UPSTREAM_SIGNING_KEYS);
}

/** A fresh Ed25519 signing key no configuration lists, as an attacker or a future rotation would hold. */
export async function generateSigningKey(kid: string): Promise<UpstreamSigningKey> {
  const { privateKey } = await generateKeyPair(UPSTREAM_CREDENTIAL_ALG, {
    crv: "Ed25519",
    extractable: true,
  });
  const { x, d } = await exportJWK(privateKey);
  if (!x || !d) throw new Error("generated key has no x or d");
  return { kty: "OKP", crv: "Ed25519", alg: UPSTREAM_CREDENTIAL_ALG, kid, x, d };
}

export interface CredentialClaims {
  tenant: string;
  run: string;
  tool: string;
  /** Epoch milliseconds. */
  exp: number;
}

/** The claims of an upstream credential (a JWT), read without verifying it; null if it is no JWT. */
export function credentialClaims(credential: string): CredentialClaims | null {
  try {
    const { sub, run, aud, exp } = decodeJwt(credential);
    if (typeof sub !== "string" || typeof run !== "string" || typeof aud !== "string") return null;
    if (typeof exp !== "number") return null;
    return { tenant: sub, run, tool: aud, exp: exp * 1_000 };
  } catch {
    return null;
  }
}
