import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { storeOf } from "../../sandbox/src/env";
import { type MetricCounts, MetricsReportSchema } from "../../src/wire/metrics";
import { armFault, asOperator, callTool, decide, openRun } from "./helpers";

/**
 * The four high-risk rates of `GET /v1/metrics` (approval trigger, approval bypass, idempotency
 * conflict, side-effect replay), each a share of the high-risk calls: draft, write and destructive
 * calls the run's ledger answered, polls of a pending approval excluded.
 */

async function supportTotals(tenant: "acme" | "initech"): Promise<MetricCounts> {
  const { status, body } = await asOperator("/v1/metrics?namespace=support", {}, tenant);
  expect(status, JSON.stringify(body.error)).toBe(200);
  const totals = MetricsReportSchema.parse(body.data).series[0]?.totals;
  if (!totals) throw new Error("no support series");
  return totals;
}

const HIGH_RISK = [
  "high_risk_calls",
  "approvals_asked",
  "approval_bypasses",
  "idempotency_conflicts",
  "duplicates_prevented",
] as const;

function delta(before: MetricCounts, after: MetricCounts) {
  return Object.fromEntries(HIGH_RISK.map((counter) => [counter, after[counter] - before[counter]]));
}

const landed = { timeout: 15_000, interval: 250 };

describe("GET /v1/metrics: the high-risk rates", () => {
  it("counts triggers and side-effect replays over high-risk calls; polls and reads count nothing", async () => {
    const before = await supportTotals("acme");
    const run = await openRun("acme");
    expect((await callTool(run, "lookup_order", { order_id: "A1001" })).body.outcome).toBe("success");
    const ticket = {
      customer_id: "C102",
      priority: "low",
      summary: "High-risk rates: a ticket written twice.",
    };
    expect((await callTool(run, "create_internal_ticket", ticket)).body.outcome).toBe("success");
    expect((await callTool(run, "create_internal_ticket", ticket)).body.replayed).toBe(true);
    const refund = { order_id: "A1004", amount_cents: 100, reason: "user_cancel" };
    const asked = await callTool(run, "issue_refund", refund);
    expect(asked.body.approval?.state).toBe("pending");
    // A poll of the pending approval: asking again is what the agent was told, not a new call.
    expect((await callTool(run, "issue_refund", refund)).body.approval?.state).toBe("pending");
    expect((await decide(asked.body.approval?.id ?? "", "approve")).status).toBe(200);
    expect((await callTool(run, "issue_refund", refund)).body).toMatchObject({
      outcome: "success",
      replayed: true,
    });

    await vi.waitFor(async () => {
      expect(delta(before, await supportTotals("acme"))).toEqual({
        // the ticket twice, the refund asked, the refund's replay
        high_risk_calls: 4,
        approvals_asked: 1,
        approval_bypasses: 0,
        idempotency_conflicts: 0,
        duplicates_prevented: 2,
      });
    }, landed);
    const totals = await supportTotals("acme");
    expect(totals.approval_trigger_rate).toBe(totals.approvals_asked / totals.high_risk_calls);
    expect(totals.approval_bypass_rate).toBe(totals.approval_bypasses / totals.high_risk_calls);
    expect(totals.idempotency_conflict_rate).toBe(totals.idempotency_conflicts / totals.high_risk_calls);
    expect(totals.side_effect_replay_rate).toBe(totals.duplicates_prevented / totals.high_risk_calls);
  });

  it("counts an upstream's idempotency_key_reused refusal as an idempotency conflict", async () => {
    const before = await supportTotals("initech");
    const run = await openRun("initech");
    const ticket = {
      customer_id: "C303",
      priority: "low",
      summary: "High-risk rates: a key the upstream saw before.",
    };
    await armFault(run.id, { mode: "error_500", path_prefix: "/tickets", times: 1 });
    const first = await callTool(run, "create_internal_ticket", ticket);
    expect(first.body.error?.side_effect_confirmed).toBeNull();
    const key = first.body.idempotency_key;
    expect(key).toBeTruthy();
    // The upstream holds the key for another request, as if someone else had used it.
    const sandboxStore = storeOf({ STORE: env.SANDBOX_STORE });
    await sandboxStore.releaseIdempotency("initech", key ?? "");
    await sandboxStore.reserveIdempotency("initech", key ?? "", "another-request", 60_000);
    // Its lease run out, so the key is not "in use": only the other request's fingerprint remains.
    await sandboxStore.renewIdempotency("initech", key ?? "", -1);
    const resent = await callTool(run, "create_internal_ticket", ticket);
    expect(resent.body.error?.details?.upstream_code).toBe("idempotency_key_reused");

    await vi.waitFor(async () => {
      expect(delta(before, await supportTotals("initech"))).toMatchObject({
        high_risk_calls: 2,
        idempotency_conflicts: 1,
        approval_bypasses: 0,
      });
    }, landed);
    const totals = await supportTotals("initech");
    expect(totals.idempotency_conflict_rate).toBeGreaterThan(0);
  });
});
