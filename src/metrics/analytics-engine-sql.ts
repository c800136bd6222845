import * as z from "zod";
import { COUNTERS, type Counter, type Counts } from "./events";
import type { BucketRange, MetricRow } from "./series";

/** The dataset wrangler.toml binds as METRICS in production; the SQL API names tables by dataset. */
export const METRICS_DATASET = "edge_tool_proxy_events";

const INTERVALS = { minute: "MINUTE", hour: "HOUR", day: "DAY" } as const;

/** A string literal of the SQL API's dialect: quotes and backslashes escaped. */
export function sqlString(value: string): string {
  return `'${value.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

/** `2026-05-01 12:00:00`: the API's datetime literal, in UTC (its default time zone). */
function sqlDateTime(ms: number): string {
  return `toDateTime(${sqlString(new Date(ms).toISOString().slice(0, 19).replace("T", " "))})`;
}

/**
 * The SQL of one read: sums per bucket and namespace of one tenant (index1) over the range.
 * Analytics Engine may sample a busy tenant's points; each row then stands for `_sample_interval`
 * events, so every counter is summed multiplied by it (the estimate Cloudflare documents).
 */
export function buildMetricsSql(tenant: string, range: BucketRange, namespace: string | null): string {
  const sums = COUNTERS.map((counter, index) => `SUM(_sample_interval * double${index + 1}) AS ${counter}`);
  const where = [
    `index1 = ${sqlString(tenant)}`,
    `timestamp >= ${sqlDateTime(range.since)}`,
    `timestamp < ${sqlDateTime(range.until)}`,
    ...(namespace === null ? [] : [`blob1 = ${sqlString(namespace)}`]),
  ];
  return [
    "SELECT",
    `  toUnixTimestamp(toStartOfInterval(timestamp, INTERVAL '1' ${INTERVALS[range.bucket]})) AS t,`,
    "  blob1 AS namespace,",
    `  ${sums.join(",\n  ")}`,
    `FROM ${METRICS_DATASET}`,
    `WHERE ${where.join("\n  AND ")}`,
    "GROUP BY t, namespace",
    "ORDER BY t, namespace",
    "FORMAT JSON",
  ].join("\n");
}

/** The API sends 64-bit integers as strings and the sums as numbers; both are read as numbers. */
const numeric = z.union([z.number(), z.string().regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/)]).transform(Number);

const RowSchema = z.object({
  t: numeric,
  namespace: z.string(),
  ...(Object.fromEntries(COUNTERS.map((counter) => [counter, numeric])) as Record<Counter, typeof numeric>),
});

/** `FORMAT JSON`'s answer: column types in `meta`, one object per row in `data`. */
const ResponseSchema = z.object({
  meta: z.array(z.object({ name: z.string(), type: z.string() })).optional(),
  data: z.array(RowSchema),
  rows: z.number().optional(),
});

export type SqlAnswer = { ok: true; rows: MetricRow[] } | { ok: false; reason: string };

/** Rows from the SQL API's JSON answer, or why it could not be read. */
export function parseMetricsResponse(body: unknown): SqlAnswer {
  const parsed = ResponseSchema.safeParse(body);
  if (!parsed.success) return { ok: false, reason: "the SQL API answered an unexpected shape" };
  const rows = parsed.data.data.map(({ t, namespace, ...counts }) => ({
    // toUnixTimestamp answers seconds.
    t: t * 1000,
    namespace,
    counts: counts satisfies Counts,
  }));
  return { ok: true, rows };
}

export interface SqlApiAccess {
  accountId: string;
  token: string;
}

/** How long a read waits for the SQL API before the route answers a retryable failure. */
const SQL_TIMEOUT_MS = 10_000;

/** Runs one read against the Analytics Engine SQL API. `fetcher` is the global fetch in production. */
export async function queryAnalyticsEngine(
  access: SqlApiAccess,
  sql: string,
  fetcher: typeof fetch = fetch,
): Promise<SqlAnswer> {
  let response: Response;
  try {
    response = await fetcher(
      `https://api.cloudflare.com/client/v4/accounts/${encodeURIComponent(access.accountId)}/analytics_engine/sql`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${access.token}`, "content-type": "text/plain" },
        body: sql,
        signal: AbortSignal.timeout(SQL_TIMEOUT_MS),
      },
    );
  } catch (error) {
    console.error("analytics engine SQL API unreachable", error);
    return { ok: false, reason: "the SQL API did not answer" };
  }
  if (!response.ok) {
    // The API's own text stays in the log: it may quote the query, never meant for a caller.
    console.error("analytics engine SQL API refused", response.status, (await response.text()).slice(0, 500));
    return { ok: false, reason: `the SQL API answered HTTP ${response.status}` };
  }
  try {
    return parseMetricsResponse(await response.json());
  } catch {
    return { ok: false, reason: "the SQL API answered something other than JSON" };
  }
}
