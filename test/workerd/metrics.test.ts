import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { app } from "../../src/app";
import { summarize } from "../../src/approvals/model";
import { readMetrics } from "../../src/metrics/read";
import { type ApprovalChange, recordApprovalChange } from "../../src/metrics/record";
import type { ApprovalRecord } from "../../src/wire/approval";
import { envelopeSchema } from "../../src/wire/envelope";
import { type MetricCounts, type MetricsReport, MetricsReportSchema } from "../../src/wire/metrics";
import { asOperator, callTool, decide, OPERATOR_KEYS, openRun, request } from "./helpers";

type Tenant = keyof typeof OPERATOR_KEYS;

/** The tenant's counts for its support namespace over the last day, through the API. */
async function supportTotals(tenant: Tenant): Promise<MetricCounts> {
  const { status, body } = await asOperator("/v1/metrics?namespace=support", {}, tenant);
  expect(status, JSON.stringify(body.error)).toBe(200);
  const report = MetricsReportSchema.parse(body.data);
  expect(report.series.map((series) => series.namespace)).toEqual(["support"]);
  const totals = report.series[0]?.totals;
  if (!totals) throw new Error("no support series");
  return totals;
}

/** What changed between two readings, for the counters a test names. */
function delta(before: MetricCounts, after: MetricCounts, counters: readonly (keyof MetricCounts)[]) {
  return Object.fromEntries(
    counters.map((counter) => [counter, Number(after[counter]) - Number(before[counter])]),
  );
}

const CALL_COUNTERS = [
  "calls",
  "succeeded",
  "retryable",
  "terminal",
  "invalid",
  "loops",
  "escalations",
  "replays",
  "duplicates_prevented",
] as const;

/** Recording happens after each answer, batched per isolate: poll until it has landed. */
const landed = { timeout: 15_000, interval: 250 };

describe("GET /v1/metrics: the health of a tenant's agents", () => {
  it("counts a run's read, invalid call, loop, replayed write, escalation and approved refund", async () => {
    const before = await supportTotals("acme");
    const otherBefore = await supportTotals("globex");
    const run = await openRun("acme");

    expect((await callTool(run, "lookup_order", { order_id: "A1001" })).body.outcome).toBe("success");
    expect((await callTool(run, "lookup_order", { orderId: "A1001" })).body.error?.code).toBe(
      "validation_error",
    );
    const looped = [];
    for (let attempt = 0; attempt < 3; attempt++)
      looped.push(await callTool(run, "lookup_order", { order_id: "A1002" }));
    expect(looped.map(({ body }) => body.error?.code ?? "ok")).toEqual(["ok", "ok", "repeat_detected"]);
    const ticket = { customer_id: "C102", priority: "low", summary: "Metrics: a ticket written twice." };
    await callTool(run, "create_internal_ticket", ticket);
    expect((await callTool(run, "create_internal_ticket", ticket)).body.replayed).toBe(true);
    const refund = { order_id: "A1004", amount_cents: 100, reason: "user_cancel" };
    const asked = await callTool(run, "issue_refund", refund);
    expect(asked.body.approval?.state).toBe("pending");
    expect((await decide(asked.body.approval?.id ?? "", "approve")).status).toBe(200);
    const replayed = await callTool(run, "issue_refund", refund);
    expect(replayed.body).toMatchObject({ outcome: "success", replayed: true });

    await vi.waitFor(async () => {
      expect(delta(before, await supportTotals("acme"), CALL_COUNTERS)).toEqual({
        calls: 9,
        succeeded: 6,
        retryable: 1,
        terminal: 2,
        invalid: 1,
        loops: 1,
        escalations: 1,
        replays: 2,
        duplicates_prevented: 2,
      });
    }, landed);

    // The approval's life, counted where its state is written (the tenant's approval directory).
    await vi.waitFor(async () => {
      const counted = delta(before, await supportTotals("acme"), [
        "approvals_asked",
        "approved",
        "approvals_decided",
      ]);
      expect(counted).toEqual({ approvals_asked: 1, approved: 1, approvals_decided: 1 });
    }, landed);

    // Another tenant sees none of it.
    expect(delta(otherBefore, await supportTotals("globex"), CALL_COUNTERS)).toEqual(
      Object.fromEntries(CALL_COUNTERS.map((counter) => [counter, 0])),
    );

    // At the source: the tenant's own store holds the calls per tool, in minute buckets.
    const store = env.METRICS_STORE;
    if (!store) throw new Error("the sandbox binds METRICS_STORE");
    const perTool = await runInDurableObject(store.get(store.idFromName("acme")), (_instance, state) =>
      state.storage.sql
        .exec<{ tool: string }>("SELECT DISTINCT tool FROM minutes WHERE namespace = 'support' ORDER BY tool")
        .toArray()
        .map((row) => row.tool),
    );
    expect(perTool).toEqual(
      expect.arrayContaining(["create_internal_ticket", "issue_refund", "lookup_order"]),
    );
    const globexRows = await runInDurableObject(store.get(store.idFromName("globex")), (_instance, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM minutes").one(),
    );
    expect(globexRows.n).toBe(0);
  });

  it("answers every bucket of the range, oldest first, with the rates derived from the counts", async () => {
    const run = await openRun("acme");
    await callTool(run, "lookup_order", { order_id: "A1001" });
    const until = new Date(Date.now() + 60_000).toISOString();
    const since = new Date(Date.now() - 9 * 60_000).toISOString();
    await vi.waitFor(async () => {
      const { body } = await asOperator(`/v1/metrics?bucket=minute&since=${since}&until=${until}`);
      const report: MetricsReport = MetricsReportSchema.parse(body.data);
      expect(report).toMatchObject({ tenant: "acme", bucket: "minute", source: "metrics_store" });
      const points = report.series[0]?.points ?? [];
      expect(points.length).toBeGreaterThanOrEqual(10);
      expect(points.map((point) => point.t)).toEqual([...points.map((point) => point.t)].sort());
      const busy = points.filter((point) => point.calls > 0);
      expect(busy.length).toBeGreaterThan(0);
      // A call waiting for a human is neither success nor failure: out of the rate's whole.
      for (const point of busy) {
        const answered = point.calls - point.escalations;
        expect(point.success_rate).toBe(answered > 0 ? point.succeeded / answered : null);
      }
      expect(points.find((point) => point.calls === 0)?.success_rate ?? null).toBeNull();
    }, landed);
  });

  it("refuses a bad query with a problem naming the parameter", async () => {
    const now = Date.now();
    const iso = (offset: number) => new Date(now + offset).toISOString();
    const cases: Array<[string, string, RegExp]> = [
      [`since=${iso(0)}&until=${iso(-1000)}`, "query.since", /before until/],
      [`since=${iso(-9 * 86_400_000)}&until=${iso(0)}`, "query.since", /longer than 8 days/],
      [`bucket=minute&since=${iso(-86_400_000)}`, "query.bucket", /more than 500/],
      ["bucket=week", "query.bucket", /not an allowed value/],
      ["since=yesterday", "query.since", /.+/],
      ["tenant=globex", "query.tenant", /unknown field/],
      ["namespace=billing", "query.namespace", /not a namespace of this tenant/],
    ];
    for (const [query, field, reason] of cases) {
      const { status, body } = await asOperator(`/v1/metrics?${query}`);
      expect(status, query).toBe(422);
      expect(body.error?.code, query).toBe("validation_error");
      const problem = body.error?.problems.find((candidate) => candidate.field === field);
      expect(problem?.reason, `${query}: ${JSON.stringify(body.error?.problems)}`).toMatch(reason);
    }
  });

  it("needs an operator key: none is 401, another kind of credential 403", async () => {
    const anonymous = await request("/v1/metrics");
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error?.code).toBe("permission_error");
    const tenantKey = await request("/v1/metrics", { headers: { authorization: "Bearer acme-demo-key" } });
    expect(tenantKey.status).toBe(403);
    const run = await openRun("acme");
    const runToken = await request("/v1/metrics", { headers: { authorization: `Bearer ${run.token}` } });
    expect(runToken.status).toBe(403);
  });

  it("says metrics reading is not configured where Analytics Engine is bound without a token", async () => {
    const written: AnalyticsEngineDataPoint[] = [];
    const production = {
      ...env,
      METRICS: { writeDataPoint: (point?: AnalyticsEngineDataPoint) => point && written.push(point) },
      METRICS_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
      METRICS_API_TOKEN: "",
    };
    const response = await app.request(
      "https://proxy.test/v1/metrics",
      { headers: { authorization: `Bearer ${OPERATOR_KEYS.acme}` } },
      production,
    );
    const body = envelopeSchema().parse(await response.json());
    expect(response.status).toBe(500);
    expect(body.error).toMatchObject({
      code: "internal_error",
      recommended_next_action: "escalate_to_human",
      details: { missing: ["METRICS_API_TOKEN"] },
    });
    expect(body.error?.message).toContain("Metrics reading is not configured");
  });
});

describe("recordApprovalChange", () => {
  /** A real approval's summary, to change state by hand: its tenant here is initech, which nothing else uses. */
  async function pendingSummary(): Promise<ApprovalChange> {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", {
      order_id: "A1003",
      amount_cents: 1,
      reason: "user_cancel",
    });
    const detail = await asOperator(`/v1/approvals/${asked.body.approval?.id}`);
    const record = (detail.body.data as { approval: ApprovalRecord }).approval;
    return { ...summarize(record), tenant: "initech" };
  }

  const at = (summary: ApprovalChange, ms: number) =>
    new Date(Date.parse(summary.created_at) + ms).toISOString();

  it("counts asked, approved, rejected and expired once each, with the wait of human decisions", async () => {
    const ctx = createExecutionContext();
    const approved = await pendingSummary();
    recordApprovalChange(env, null, approved, ctx);
    recordApprovalChange(env, "pending", approved, ctx);
    recordApprovalChange(
      env,
      "pending",
      { ...approved, state: "approved", decided_at: at(approved, 90_000) },
      ctx,
    );
    recordApprovalChange(
      env,
      "approved",
      { ...approved, state: "executed", decided_at: at(approved, 90_000) },
      ctx,
    );

    const rejected = await pendingSummary();
    recordApprovalChange(env, null, rejected, ctx);
    recordApprovalChange(
      env,
      "pending",
      { ...rejected, state: "rejected", decided_at: at(rejected, 30_000) },
      ctx,
    );

    const expired = await pendingSummary();
    recordApprovalChange(env, null, expired, ctx);
    recordApprovalChange(
      env,
      "pending",
      { ...expired, state: "expired", decided_at: at(expired, 86_400_000) },
      ctx,
    );
    await waitOnExecutionContext(ctx);

    await vi.waitFor(async () => {
      const reading = await readMetrics(env, "initech", {
        since: Date.now() - 3_600_000,
        until: Date.now() + 60_000,
        bucket: "hour",
      });
      if (!reading.ok) throw new Error(reading.message);
      expect(reading.report.series.map((series) => series.namespace)).toEqual(["support"]);
      expect(reading.report.series[0]?.totals).toMatchObject({
        calls: 0,
        approvals_asked: 3,
        approved: 1,
        rejected: 1,
        expired: 1,
        approvals_decided: 2,
        approval_wait_ms_total: 120_000,
        avg_approval_wait_ms: 60_000,
      });
    }, landed);
  });
});
