import { loadConfig } from "../config/load";
import { tenantObject } from "../config/placement";
import type { Env } from "../env";
import { BUCKET_MS, type FiringAlert, type MetricBucket, type MetricsReport } from "../wire/metrics";
import { buildMetricsSql, queryAnalyticsEngine } from "./analytics-engine-sql";
import { alignRange, type BucketRange, type MetricRow, toSeries } from "./series";

export interface MetricsQuery {
  /** Epoch milliseconds; floored to the start of its bucket. */
  since: number;
  /** Epoch milliseconds, exclusive. */
  until: number;
  bucket: MetricBucket;
  namespace?: string;
}

export type MetricsReading =
  | { ok: true; report: MetricsReport }
  | {
      ok: false;
      /** `not_configured`: nothing to read from here; `unavailable`: the source failed this time. */
      reason: "not_configured" | "unavailable";
      message: string;
      details: Record<string, unknown> | null;
    };

type Rows = { ok: true; rows: MetricRow[] } | Extract<MetricsReading, { ok: false }>;

/**
 * The health of a tenant's agents over a range, per namespace, read where the events were written:
 * the Analytics Engine SQL API where METRICS is bound (which needs METRICS_ACCOUNT_ID and the
 * METRICS_API_TOKEN secret), the tenant's MetricsStore elsewhere.
 *
 * @example
 * const reading = await readMetrics(env, "acme", { since: Date.now() - 86_400_000, until: Date.now(), bucket: "hour" });
 * if (reading.ok) for (const series of reading.report.series) console.log(series.namespace, series.totals.calls);
 */
export async function readMetrics(
  env: Env,
  tenant: string,
  query: MetricsQuery,
  fetcher: typeof fetch = fetch,
): Promise<MetricsReading> {
  const range = alignRange(query.since, query.until, query.bucket);
  const namespace = query.namespace ?? null;
  const source = env.METRICS ? "analytics_engine" : "metrics_store";
  const read = env.METRICS
    ? await readAnalyticsEngine(env, tenant, range, namespace, fetcher)
    : await readStore(env, tenant, range, namespace);
  if (!read.ok) return read;
  const namespaces = namespace !== null ? [namespace] : (loadConfig(env).tenants[tenant]?.namespaces ?? []);
  return {
    ok: true,
    report: {
      tenant,
      since: new Date(range.since).toISOString(),
      until: new Date(range.until).toISOString(),
      bucket: range.bucket,
      source,
      series: toSeries(read.rows, range, namespaces),
      alerts: await firingAlerts(env, tenant),
    },
  };
}

/** The tenant's alerts firing now: its MetricsStore judges them (none where it is not bound). */
async function firingAlerts(env: Env, tenant: string): Promise<FiringAlert[]> {
  const store = env.METRICS_STORE;
  if (!store || Object.keys(loadConfig(env).tenants[tenant]?.alerts ?? {}).length === 0) return [];
  return tenantObject(env, store, tenant, tenant).firingAlerts(tenant);
}

async function readStore(
  env: Env,
  tenant: string,
  range: BucketRange,
  namespace: string | null,
): Promise<Rows> {
  const store = env.METRICS_STORE;
  if (!store) {
    return {
      ok: false,
      reason: "not_configured",
      message:
        "Metrics are not configured: this environment binds neither METRICS (Analytics Engine) nor METRICS_STORE.",
      details: { missing_bindings: ["METRICS", "METRICS_STORE"] },
    };
  }
  const rows = await tenantObject(env, store, tenant, tenant).read({
    since: range.since,
    until: range.until,
    bucketMs: BUCKET_MS[range.bucket],
    namespace,
  });
  return { ok: true, rows };
}

async function readAnalyticsEngine(
  env: Env,
  tenant: string,
  range: BucketRange,
  namespace: string | null,
  fetcher: typeof fetch,
): Promise<Rows> {
  const accountId = env.METRICS_ACCOUNT_ID?.trim() ?? "";
  const token = env.METRICS_API_TOKEN?.trim() ?? "";
  const missing = [...(accountId ? [] : ["METRICS_ACCOUNT_ID"]), ...(token ? [] : ["METRICS_API_TOKEN"])];
  if (missing.length > 0) {
    return {
      ok: false,
      reason: "not_configured",
      message: `Metrics reading is not configured: set ${missing.join(" and ")} (the account id as a var, an Analytics Engine read token as a secret). Events are still recorded.`,
      details: { missing },
    };
  }
  const answer = await queryAnalyticsEngine(
    { accountId, token },
    buildMetricsSql(tenant, range, namespace),
    fetcher,
  );
  if (!answer.ok) {
    return {
      ok: false,
      reason: "unavailable",
      message: `Metrics could not be read: ${answer.reason}. Try again shortly.`,
      details: null,
    };
  }
  return answer;
}
