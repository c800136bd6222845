import * as z from "zod";

/** The widest range one read may span: what the local store keeps, and bounded work for any reader. */
export const MAX_RANGE_MS = 8 * 24 * 60 * 60 * 1000;
/** The most buckets one read may answer per namespace. */
export const MAX_BUCKETS = 500;
export const DEFAULT_RANGE_MS = 24 * 60 * 60 * 1000;

export const METRIC_BUCKETS = ["minute", "hour", "day"] as const;
export const MetricBucketSchema = z.enum(METRIC_BUCKETS);
export type MetricBucket = z.infer<typeof MetricBucketSchema>;

export const BUCKET_MS: Record<MetricBucket, number> = {
  minute: 60_000,
  hour: 60 * 60_000,
  day: 24 * 60 * 60_000,
};

/** The range a query names, in epoch milliseconds: until defaults to now, since to 24 hours before until. */
export function rangeOf(query: { since?: string; until?: string }, now: number = Date.now()) {
  const until = query.until ? Date.parse(query.until) : now;
  const since = query.since ? Date.parse(query.since) : until - DEFAULT_RANGE_MS;
  return { since, until };
}

/** `GET /v1/metrics`: which range, at which resolution, of which namespace. */
export const MetricsQuerySchema = z
  .strictObject({
    since: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("Start of the range, ISO 8601 (2026-05-01T00:00:00Z); 24 hours before until when omitted."),
    until: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("End of the range, exclusive, ISO 8601; now when omitted."),
    bucket: MetricBucketSchema.default("hour").describe("The width of each point: minute, hour or day."),
    namespace: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/, "not a namespace name")
      .optional()
      .describe("One namespace of the tenant, such as support; every namespace when omitted."),
  })
  .superRefine((query, ctx) => {
    const { since, until } = rangeOf(query);
    if (since >= until) {
      ctx.addIssue({ code: "custom", path: ["since"], message: "must be before until" });
      return;
    }
    if (until - since > MAX_RANGE_MS) {
      ctx.addIssue({ code: "custom", path: ["since"], message: "the range is longer than 8 days" });
      return;
    }
    const step = BUCKET_MS[query.bucket];
    const buckets = Math.ceil((until - Math.floor(since / step) * step) / step);
    if (buckets > MAX_BUCKETS) {
      ctx.addIssue({
        code: "custom",
        path: ["bucket"],
        message: `the range holds ${buckets} ${query.bucket} buckets, more than ${MAX_BUCKETS}; use a wider bucket or a shorter range`,
      });
    }
  });

const count = z.number().nonnegative();
const rate = z.number().min(0).max(1).nullable();

/** The counters of one bucket (or of a whole range), and the rates derived from them. */
export const MetricCountsSchema = z.strictObject({
  calls: count.describe("Tool calls answered."),
  succeeded: count.describe("Calls whose outcome was success."),
  retryable: count.describe("Calls answered retryable_failure."),
  terminal: count.describe("Calls answered terminal_failure."),
  invalid: count.describe("Calls refused as wrong: validation_error or permission_error (policy)."),
  loops: count.describe("Calls refused by the repeat breaker (repeat_detected)."),
  escalations: count.describe("Calls answered with an approval pending: the agent waits for a human."),
  approvals_asked: count.describe("Approvals requested."),
  approved: count.describe("Approvals granted (executed ones included)."),
  rejected: count.describe("Approvals rejected."),
  expired: count.describe("Approvals that expired undecided."),
  approval_wait_ms_total: count.describe("Sum of the waits of decided approvals, from request to decision."),
  approvals_decided: count.describe("Approvals decided by a human: approved plus rejected."),
  replays: count.describe("Answers served from the ledger (replayed: true)."),
  duplicates_prevented: count.describe(
    "Replayed or joined answers of write, draft or destructive calls: an effect not done twice.",
  ),
  drifted: count.describe(
    "Calls refused because a remote MCP tool's definition no longer matched its reviewed pin (upstream_changed).",
  ),
  approvals_overdue: count.describe(
    "Approvals still undecided past their SLA, counted once each when the escalation role is told.",
  ),
  high_risk_calls: count.describe(
    "Calls of a draft, write or destructive tool the run's ledger answered with a valid key, polls of a pending approval excluded.",
  ),
  approval_bypasses: count.describe(
    "High-risk calls sent upstream while their policy required an approval that was not granted (measured, though the ledger never sends one).",
  ),
  idempotency_conflicts: count.describe(
    "A key matched a stored key holding other request bytes, or the upstream refused a key as reused with another request (idempotency_key_reused).",
  ),
  success_rate: rate.describe(
    "succeeded / (calls - escalations): a call answered with an approval pending waits for a human, and counts as neither success nor failure; null without other calls.",
  ),
  invalid_rate: rate.describe("invalid / calls; null without calls."),
  avg_approval_wait_ms: z
    .number()
    .nonnegative()
    .nullable()
    .describe("approval_wait_ms_total / approvals_decided; null without decisions."),
  approval_trigger_rate: rate.describe("approvals_asked / high_risk_calls; null without high-risk calls."),
  approval_bypass_rate: rate.describe("approval_bypasses / high_risk_calls; null without high-risk calls."),
  idempotency_conflict_rate: rate.describe(
    "idempotency_conflicts / high_risk_calls; null without high-risk calls.",
  ),
  side_effect_replay_rate: rate.describe(
    "duplicates_prevented / high_risk_calls: high-risk calls answered from the ledger instead of acting again; null without high-risk calls.",
  ),
});
export type MetricCounts = z.infer<typeof MetricCountsSchema>;

export const MetricPointSchema = z.strictObject({
  t: z.iso.datetime().describe("The start of the bucket."),
  ...MetricCountsSchema.shape,
});
export type MetricPoint = z.infer<typeof MetricPointSchema>;

export const MetricSeriesSchema = z.strictObject({
  namespace: z.string(),
  totals: MetricCountsSchema.describe("The whole range at once."),
  points: z.array(MetricPointSchema).describe("Every bucket of the range, oldest first; empty ones count 0."),
});
export type MetricSeries = z.infer<typeof MetricSeriesSchema>;

/** An alert firing: its rate crossed the tenant's threshold over a window and has not recovered since. */
export const FiringAlertSchema = z.strictObject({
  rate: z
    .string()
    .describe("The rate watched: task_success, invalid_calls, human_takeover or duplicates_prevented."),
  fires: z.enum(["above", "below"]).describe("Which side of the threshold is bad."),
  threshold: z.number().min(0).max(1),
  window_minutes: z.number().int().positive(),
  window_start: z.iso.datetime().describe("The start of the window last judged."),
  value: rate.describe("The rate over that window."),
  sample: count.describe("What the rate is a share of (calls) in that window."),
  since: z.iso.datetime().describe("When it first crossed; it shows until a window says it recovered."),
});
export type FiringAlert = z.infer<typeof FiringAlertSchema>;

/** What `GET /v1/metrics` answers in `data`: the health of the tenant's agents over a range. */
export const MetricsReportSchema = z.strictObject({
  tenant: z.string(),
  since: z.iso.datetime().describe("The start of the first bucket."),
  until: z.iso.datetime().describe("The end of the range, exclusive."),
  bucket: MetricBucketSchema,
  source: z
    .enum(["analytics_engine", "metrics_store"])
    .describe(
      "Where the counts come from: Workers Analytics Engine (sampled at high volume) or the tenant's MetricsStore (exact).",
    ),
  series: z.array(MetricSeriesSchema).describe("One per namespace of the tenant (or the one asked for)."),
  alerts: z
    .array(FiringAlertSchema)
    .describe("The tenant's alerts firing now, whatever the range; empty when none is (or none is set)."),
});
export type MetricsReport = z.infer<typeof MetricsReportSchema>;
