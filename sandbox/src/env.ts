import { createLocalJWKSet, type JWTVerifyGetKey } from "jose";
import { parseUpstreamJwks } from "../../src/config/signing-keys";
import type { SandboxStore } from "./store";

export interface SandboxEnv {
  STORE: DurableObjectNamespace<SandboxStore>;
  /**
   * The proxy's public keys as a JWK Set, `{"keys": [...]}`: what its `/.well-known/jwks.json`
   * serves, pinned. Every listed key verifies (rotation overlap); a set holding a private key is refused.
   */
  UPSTREAM_JWKS?: string;
  SANDBOX_ADMIN_TOKEN?: string;
  /** The proxy's approval webhook secret (`whsec_` + base64): `/_hooks/approvals` verifies with it. */
  APPROVAL_WEBHOOK_SECRET?: string;
}

/** The one store instance: every tenant lives in it, separated by a tenant column. */
export function storeOf(env: SandboxEnv): DurableObjectStub<SandboxStore> {
  return env.STORE.get(env.STORE.idFromName("sandbox"));
}

let cachedRaw: string | undefined;
let cachedKeys: JWTVerifyGetKey | null = null;

/**
 * The key set credentials are verified against, from `UPSTREAM_JWKS`; null means the var is missing
 * or malformed, never "accept anything". Built once per value, so imported keys are reused.
 */
export function upstreamKeySet(env: SandboxEnv): JWTVerifyGetKey | null {
  const raw = env.UPSTREAM_JWKS;
  if (raw === cachedRaw) return cachedKeys;
  cachedRaw = raw;
  const jwks = parseUpstreamJwks(raw);
  cachedKeys = jwks ? createLocalJWKSet(jwks) : null;
  return cachedKeys;
}
