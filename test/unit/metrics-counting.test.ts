import { describe, expect, it } from "vitest";
import { countApprovalChange, countCall, countHighRisk, zeroCounts } from "../../src/metrics/events";
import { alignRange, toSeries, withRates } from "../../src/metrics/series";
import { type Envelope, failure, success } from "../../src/wire/envelope";

const base = { call_id: "call_1", environment: "sandbox" as const, tool: "issue_refund" };
const keyed = { ...base, idempotency_key: "idem_1" };

/** The counters a call sets, by name. */
function countedAs(envelope: Envelope): string[] {
  const counts = countCall(envelope);
  return Object.entries(counts)
    .filter(([, value]) => value > 0)
    .map(([counter]) => counter);
}

describe("what a call counts as", () => {
  it("counts a success, a retryable and a terminal failure by outcome", () => {
    expect(countedAs(success(base, {}))).toEqual(["calls", "succeeded"]);
    expect(countedAs(failure(base, { code: "transient_error", message: "x" }))).toEqual([
      "calls",
      "retryable",
    ]);
    expect(countedAs(failure(base, { code: "conflict_error", message: "x" }))).toEqual(["calls", "terminal"]);
  });

  it("counts validation and policy refusals as invalid calls, nothing else", () => {
    expect(countedAs(failure(base, { code: "validation_error", message: "x" }))).toEqual([
      "calls",
      "terminal",
      "invalid",
    ]);
    expect(countedAs(failure(base, { code: "permission_error", message: "x" }))).toContain("invalid");
    expect(countedAs(failure(base, { code: "not_found", message: "x" }))).not.toContain("invalid");
    expect(countedAs(failure(base, { code: "rate_limited", message: "x" }))).not.toContain("invalid");
  });

  it("counts the repeat breaker's refusal as a loop", () => {
    expect(countedAs(failure(base, { code: "repeat_detected", message: "x" }))).toEqual([
      "calls",
      "terminal",
      "loops",
    ]);
  });

  it("counts an answer with a pending approval as an escalation, a decided one not", () => {
    const pending = { id: "apr_1", state: "pending" as const, expires_at: "2026-05-02T00:00:00.000Z" };
    expect(
      countedAs(failure({ ...keyed, approval: pending }, { code: "approval_required", message: "x" })),
    ).toEqual(["calls", "retryable", "escalations"]);
    const rejected = { ...pending, state: "rejected" as const };
    expect(
      countedAs(
        failure(
          { ...keyed, replayed: true, approval: rejected },
          { code: "approval_rejected", message: "x" },
        ),
      ),
    ).toEqual(["calls", "terminal", "replays"]);
  });

  it("counts a replayed keyed call as a duplicate effect prevented, a replayed read only as a replay", () => {
    expect(countedAs(success({ ...keyed, replayed: true }, {}))).toEqual([
      "calls",
      "succeeded",
      "replays",
      "duplicates_prevented",
    ]);
    // An unclear failure replayed: the effect may exist, and it was not attempted again.
    expect(
      countedAs(failure({ ...keyed, replayed: true }, { code: "partial_success", message: "x" })),
    ).toContain("duplicates_prevented");
    expect(countedAs(success({ ...base, replayed: true }, {}))).toEqual(["calls", "succeeded", "replays"]);
  });
});

describe("what an approval's change counts as", () => {
  it("counts a new approval as asked, and the same state written again as nothing", () => {
    expect(countApprovalChange(null, "pending", 0)).toMatchObject({ approvals_asked: 1, approved: 0 });
    expect(countApprovalChange("pending", "pending", 5_000)).toBeNull();
  });

  it("counts approved once, executed after it not again, with the wait until the decision", () => {
    expect(countApprovalChange("pending", "approved", 42_000)).toMatchObject({
      approvals_asked: 0,
      approved: 1,
      approvals_decided: 1,
      approval_wait_ms_total: 42_000,
    });
    expect(countApprovalChange("approved", "executed", 99_000)).toBeNull();
    expect(countApprovalChange("pending", "executed", 7_000)).toMatchObject({
      approved: 1,
      approval_wait_ms_total: 7_000,
    });
  });

  it("counts a rejection with its wait, an expiry without one", () => {
    expect(countApprovalChange("pending", "rejected", 3_000)).toMatchObject({
      rejected: 1,
      approvals_decided: 1,
      approval_wait_ms_total: 3_000,
    });
    expect(countApprovalChange("pending", "expired", 86_400_000)).toMatchObject({
      expired: 1,
      approvals_decided: 0,
      approval_wait_ms_total: 0,
    });
  });
});

describe("series", () => {
  it("lists every bucket of every namespace, empty ones as zero, with rates and totals", () => {
    const since = Date.parse("2026-05-01T10:30:00Z");
    const until = Date.parse("2026-05-01T13:00:00Z");
    const eleven = Date.parse("2026-05-01T11:00:00Z");
    const series = toSeries(
      [
        { t: eleven, namespace: "support", counts: { ...zeroCounts(), calls: 4, succeeded: 3, invalid: 1 } },
        // A row inside a bucket is counted in that bucket.
        { t: eleven + 60_000, namespace: "support", counts: { ...zeroCounts(), calls: 1 } },
        { t: eleven, namespace: "billing", counts: { ...zeroCounts(), calls: 2, succeeded: 2 } },
      ],
      alignRange(since, until, "hour"),
      ["support", "sales"],
    );
    expect(series.map((entry) => entry.namespace)).toEqual(["support", "sales", "billing"]);
    const support = series[0];
    expect(support?.points.map((point) => [point.t, point.calls])).toEqual([
      ["2026-05-01T10:00:00.000Z", 0],
      ["2026-05-01T11:00:00.000Z", 5],
      ["2026-05-01T12:00:00.000Z", 0],
    ]);
    expect(support?.points[1]).toMatchObject({ success_rate: 0.6, invalid_rate: 0.2 });
    expect(support?.points[0]).toMatchObject({
      success_rate: null,
      invalid_rate: null,
      avg_approval_wait_ms: null,
    });
    expect(support?.totals).toMatchObject({ calls: 5, succeeded: 3, success_rate: 0.6 });
    expect(series[1]?.totals.calls).toBe(0);
  });

  it("leaves calls waiting for a human out of the success rate: neither success nor failure", () => {
    const rates = withRates({ ...zeroCounts(), calls: 4, succeeded: 2, escalations: 2 });
    expect(rates.success_rate).toBe(1);
    expect(rates.invalid_rate).toBe(0);
    expect(withRates({ ...zeroCounts(), calls: 3, escalations: 3 }).success_rate).toBeNull();
  });
});

describe("the high-risk counts", () => {
  const facts = { poll: false, storedBytesDiffer: false, sentWithoutRequiredApproval: false };

  it("counts a high-risk call once, a poll of a pending approval not at all", () => {
    const counts = countHighRisk(facts);
    expect(counts && Object.entries(counts).filter(([, value]) => value > 0)).toEqual([
      ["high_risk_calls", 1],
    ]);
    expect(countHighRisk({ ...facts, poll: true })).toBeNull();
  });

  it("counts a send past a required approval as a bypass, and a key with other bytes as a conflict", () => {
    expect(countHighRisk({ ...facts, sentWithoutRequiredApproval: true })?.approval_bypasses).toBe(1);
    expect(countHighRisk({ ...facts, storedBytesDiffer: true })?.idempotency_conflicts).toBe(1);
  });

  it("counts an upstream's idempotency_key_reused refusal as a conflict, unless it is a replay of one", () => {
    const refused = failure(keyed, {
      code: "validation_error",
      message: "x",
      details: { upstream_status: 422, upstream_code: "idempotency_key_reused" },
    });
    expect(countCall(refused).idempotency_conflicts).toBe(1);
    expect(countCall({ ...refused, replayed: true }).idempotency_conflicts).toBe(0);
    const other = failure(keyed, {
      code: "conflict_error",
      message: "x",
      details: { upstream_code: "other" },
    });
    expect(countCall(other).idempotency_conflicts).toBe(0);
  });

  it("derives the four high-risk rates from high-risk calls, null without any", () => {
    const counts = {
      ...zeroCounts(),
      high_risk_calls: 8,
      approvals_asked: 2,
      approval_bypasses: 0,
      idempotency_conflicts: 1,
      duplicates_prevented: 4,
    };
    expect(withRates(counts)).toMatchObject({
      approval_trigger_rate: 0.25,
      approval_bypass_rate: 0,
      idempotency_conflict_rate: 0.125,
      side_effect_replay_rate: 0.5,
    });
    expect(withRates(zeroCounts())).toMatchObject({
      approval_trigger_rate: null,
      approval_bypass_rate: null,
      idempotency_conflict_rate: null,
      side_effect_replay_rate: null,
    });
  });
});
