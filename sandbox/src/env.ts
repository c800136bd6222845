import type { SandboxStore } from "./store";

export interface SandboxEnv {
  STORE: DurableObjectNamespace<SandboxStore>;
  /** JSON array of HMAC keys; the first signs, all verify (rotation overlap), as in the proxy. */
  UPSTREAM_KEYS?: string;
  SANDBOX_ADMIN_TOKEN?: string;
}

/** The one store instance: every tenant lives in it, separated by a tenant column. */
export function storeOf(env: SandboxEnv): DurableObjectStub<SandboxStore> {
  return env.STORE.get(env.STORE.idFromName("sandbox"));
}

let cachedRaw: string | undefined;
let cachedKeys: string[] | null = null;

/** Parses `UPSTREAM_KEYS`; null means the secret is missing or malformed, never "accept anything". */
export function upstreamKeys(env: SandboxEnv): string[] | null {
  const raw = env.UPSTREAM_KEYS;
  if (raw === cachedRaw) return cachedKeys;
  cachedRaw = raw;
  cachedKeys = null;
  if (!raw) return null;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (
      Array.isArray(parsed) &&
      parsed.length > 0 &&
      parsed.every((k): k is string => typeof k === "string" && k.length > 0)
    ) {
      cachedKeys = parsed;
    }
  } catch {
    // Leave cachedKeys null: a malformed secret is a configuration error, reported per request.
  }
  return cachedKeys;
}
