import { parseAgentKeyHashes } from "../auth/agent-keys";
import { parseKeyHashes, parseKeyList } from "../auth/keys";
import { type OperatorKeys, parseOperatorKeys } from "../auth/operator-keys";
import type { Env } from "../env";
import { type EnvironmentName, EnvironmentSchema } from "../wire/envelope";
import { parseCatalogWatchMs } from "./catalog-watch";
import { type FaultInjection, parseFaultInjection } from "./fault-injection";
import { parseResidencyMode, type ResidencyMode } from "./residency";
import { parseUpstreamSigningKeys, type UpstreamSigningKey } from "./signing-keys";
import { parseTenants, type Tenants } from "./tenants";

/**
 * Configuration read from the environment once per isolate. A malformed secret or var throws with
 * a message naming it, which the entry turns into a loud start-up failure.
 */
export interface ProxyConfig {
  environment: EnvironmentName;
  tenants: Tenants;
  tenantKeyHashes: Map<string, string[]>;
  operatorKeyHashes: Map<string, string[]>;
  /** Operator keys with their holders' display names. */
  operatorKeys: OperatorKeys;
  /** Agent keys by tenant and profile; empty where none are issued. */
  agentKeyHashes: Map<string, Map<string, string[]>>;
  runTokenKeys: string[];
  /** Ed25519 private JWKs: the first signs upstream credentials, all are published. */
  upstreamSigningKeys: UpstreamSigningKey[];
  /** Ed25519 private JWKs: the first signs audit receipts, all are published. */
  auditSigningKeys: UpstreamSigningKey[];
  /** Whether run scenarios and X-Sandbox-Fault headers are accepted and forwarded upstream. */
  faultInjection: FaultInjection;
  /** How often an open `subscriptions/listen` stream asks which catalog is live. */
  catalogWatchMs: number;
  /** How a tenant's jurisdiction is honoured: by Cloudflare, or simulated in names locally. */
  residencyMode: ResidencyMode;
}

let cache = new WeakMap<object, ProxyConfig>();

/**
 * Forgets the configuration read in this isolate, so the next request reads the environment again,
 * as a new deploy's isolates do: for a test that changed a var (`TENANTS`) in place.
 */
export function forgetConfig(): void {
  cache = new WeakMap();
}

export function loadConfig(env: Env): ProxyConfig {
  let config = cache.get(env);
  if (!config) {
    const environment = EnvironmentSchema.safeParse(env.ENVIRONMENT);
    if (!environment.success) throw new Error(`ENVIRONMENT must be "sandbox" or "production"`);
    const operatorKeys = parseOperatorKeys(env.OPERATOR_KEYS);
    config = {
      environment: environment.data,
      tenants: parseTenants(env.TENANTS),
      tenantKeyHashes: parseKeyHashes("TENANT_KEYS", env.TENANT_KEYS),
      operatorKeyHashes: operatorKeys.hashes,
      operatorKeys,
      agentKeyHashes: parseAgentKeyHashes(env.AGENT_KEYS),
      runTokenKeys: parseKeyList("RUN_TOKEN_KEYS", env.RUN_TOKEN_KEYS),
      upstreamSigningKeys: parseUpstreamSigningKeys("UPSTREAM_SIGNING_KEYS", env.UPSTREAM_SIGNING_KEYS),
      auditSigningKeys: parseUpstreamSigningKeys("AUDIT_SIGNING_KEYS", env.AUDIT_SIGNING_KEYS),
      faultInjection: parseFaultInjection(env.FAULT_INJECTION),
      catalogWatchMs: parseCatalogWatchMs(env.CATALOG_WATCH_MS),
      residencyMode: parseResidencyMode(env.RESIDENCY, environment.data),
    };
    cache.set(env, config);
  }
  return config;
}
