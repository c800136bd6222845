import type { AuditLog } from "./ledger/audit-log";
import type { CapPool } from "./ledger/cap-pool";
import type { CatalogBeacon } from "./ledger/catalog-beacon";
import type { ApprovalDirectory } from "./ledger/directory";
import type { EffectShard } from "./ledger/effect-shard";
import type { MetricsStore } from "./ledger/metrics-store";
import type { RateLimiter } from "./ledger/rate-limiter";
import type { RunLedger } from "./ledger/run-ledger";

/**
 * Bindings and configuration of the proxy worker. Tool bindings (ORDERS_API, PAYMENTS_API,
 * CRM_API, EMAIL_API, ...) are looked up by name from the catalog, so they are not listed here.
 */
export interface Env {
  /** "sandbox" or "production": named in every envelope. */
  ENVIRONMENT: string;
  /** Tenant configuration (namespaces, ceilings, policy limits); a table in wrangler.toml. */
  TENANTS: unknown;
  /** Secret. JSON `{ tenant: [sha256 hex of each valid key] }`; two entries during a rotation. */
  TENANT_KEYS: string;
  /** Secret. JSON array of HMAC keys for run tokens: the first signs, all verify. */
  RUN_TOKEN_KEYS: string;
  /**
   * Secret. JSON array of Ed25519 private JWKs for per-dispatch upstream credentials (JWTs): the
   * first signs, every one is published at `/.well-known/jwks.json` (public members only).
   */
  UPSTREAM_SIGNING_KEYS: string;
  /**
   * Secret. JSON array of Ed25519 private JWKs that sign the audit log's receipts: the first signs,
   * every one is published at `/.well-known/audit-jwks.json` (public members only), so receipts
   * signed before a rotation keep verifying.
   */
  AUDIT_SIGNING_KEYS: string;
  /** Secret. JSON `{ tenant: [sha256 hex of each operator key] }`. */
  OPERATOR_KEYS: string;
  /** Secret, optional. JSON `{ tenant: { agent profile: [sha256 hex of each agent key] } }`. */
  AGENT_KEYS?: string;
  /**
   * Secret, optional. `whsec_` + base64: signs the approval webhooks posted to the optional
   * `APPROVAL_WEBHOOK` binding, per Standard Webhooks. Without it no webhook is sent (never unsigned).
   */
  APPROVAL_WEBHOOK_SECRET?: string;
  /**
   * "sandbox-header" where run scenarios and X-Sandbox-Fault are forwarded to the upstream (the
   * sandbox environment); absent elsewhere, where both are refused.
   */
  FAULT_INJECTION?: string;
  /** Optional: how often an open `subscriptions/listen` stream asks which catalog is live (ms). */
  CATALOG_WATCH_MS?: string;
  /**
   * "simulated" in .dev.vars only: workerd has no jurisdictions, so a tenant's jurisdiction is
   * written into its objects' names instead (src/config/placement.ts). Absent in every deploy.
   */
  RESIDENCY?: string;
  RUN_LEDGER: DurableObjectNamespace<RunLedger>;
  /** One for the deployment: which catalog is live (src/ledger/catalog-beacon.ts). */
  CATALOG_BEACON: DurableObjectNamespace<CatalogBeacon>;
  /** One per tenant: the index of approvals across the tenant's runs. */
  APPROVAL_DIRECTORY: DurableObjectNamespace<ApprovalDirectory>;
  /**
   * A tenant's effect shards (`<tenant>/<n>`): effects per business identity and value reserved
   * against the caps, reached only by write and destructive calls (src/ledger/effect-shard.ts).
   */
  EFFECT_SHARD: DurableObjectNamespace<EffectShard>;
  /** One per tenant, currency and day: the daily value cap, leased in parts to the effect shards. */
  CAP_POOL: DurableObjectNamespace<CapPool>;
  /**
   * One per tenant: the audit log, every effect decision of the tenant's runs as a signed receipt in
   * one hash chain, kept for the tenant's audit retention (src/ledger/audit-log.ts).
   */
  AUDIT_LOG: DurableObjectNamespace<AuditLog>;
  /** One per tenant: request-rate buckets checked before any run ledger is touched. */
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  /**
   * OAuth 2.1 for MCP clients: registered clients, grants, and tokens stored only as hashes (with
   * their props encrypted), kept by @cloudflare/workers-oauth-provider. See src/oauth/.
   */
  OAUTH_KV: KVNamespace;
  /**
   * Production: the agents' health events, one Analytics Engine data point each (src/metrics/).
   * Absent locally, where Analytics Engine stores nothing; METRICS_STORE keeps them there.
   */
  METRICS?: AnalyticsEngineDataset;
  /** The Cloudflare account of the METRICS dataset, for reading it through the SQL API. */
  METRICS_ACCOUNT_ID?: string;
  /** Secret, optional. An API token with Account Analytics Read: without it GET /v1/metrics says so. */
  METRICS_API_TOKEN?: string;
  /**
   * One per tenant, the agents' health in minute buckets: every tenant's where METRICS is absent
   * (sandbox, local), beside it only those of tenants with alerts, which it judges and sends.
   */
  METRICS_STORE?: DurableObjectNamespace<MetricsStore>;
}
