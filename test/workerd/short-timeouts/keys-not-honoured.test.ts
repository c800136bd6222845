import { describe, expect, it } from "vitest";
import { armFault, callTool, openRun, refundsOf, sandboxRequests, type TestRun } from "../helpers";

/**
 * A write to an upstream that ignores idempotency keys: the sandbox's v0 refunds endpoint
 * (`POST /v0/refunds`, sandbox/API.md), which makes a new refund for every request, called through
 * `issue_refund_v0`, declared `honoured: false` with the read that settles it (./catalog.ts). The
 * upstream's own records (its refunds and its request log) are the evidence of how many effects
 * there were. globex executes small refunds without an operator; each case refunds its own order.
 */

interface Refund {
  refund_id: string;
  amount_cents: number;
}

async function refundsOfAmount(orderId: string, amount: number): Promise<Refund[]> {
  const refunds = (await refundsOf(orderId)) as unknown as Refund[];
  return refunds.filter((refund) => refund.amount_cents === amount);
}

async function v0Posts(run: TestRun) {
  const requests = await sandboxRequests(run.id);
  return requests.filter((entry) => entry.method === "POST" && entry.path === "/v0/refunds");
}

describe("a write to an upstream that ignores keys", () => {
  it("is settled by a read that finds the effect when the answer is lost, and the model's resend makes no second", async () => {
    const run = await openRun("globex");
    await armFault(run.id, { mode: "truncated", path_prefix: "/v0/refunds", times: 1 });
    const args = { order_id: "B2002", amount_cents: 211, reason: "price_error" };
    const first = await callTool(run, "issue_refund_v0", args);
    expect(first.body.outcome).toBe("success");
    const [refund] = await refundsOfAmount("B2002", 211);
    expect(first.body.data).toEqual({ effect_id: refund?.refund_id });
    expect(first.body.observed_state).toEqual({
      settled_by_read: { tool: "lookup_order", verdict: "found", effect_id: refund?.refund_id },
    });
    const resent = await callTool(run, "issue_refund_v0", args);
    expect(resent.body).toMatchObject({ outcome: "success", replayed: true });
    expect(await refundsOfAmount("B2002", 211)).toHaveLength(1);
    expect(await v0Posts(run)).toHaveLength(1);
  });

  it("tells the model a read proved it absent, and sends the resend only after reading again", async () => {
    const run = await openRun("globex");
    await armFault(run.id, { mode: "bad_gateway", path_prefix: "/v0/refunds", times: 1 });
    const args = { order_id: "B2003", amount_cents: 212, reason: "price_error" };
    const first = await callTool(run, "issue_refund_v0", args);
    expect(first.body.outcome).toBe("retryable_failure");
    expect(first.body.error).toMatchObject({
      side_effect_confirmed: false,
      recommended_next_action: "retry",
      details: { settled_by_read: { tool: "lookup_order", verdict: "absent", effect_id: null } },
    });
    expect(first.body.error?.message).toContain("A read of lookup_order shows it did not happen");
    expect(first.body.error?.message).not.toContain("cannot happen twice");
    expect(await refundsOfAmount("B2003", 212)).toHaveLength(0);

    const resent = await callTool(run, "issue_refund_v0", args);
    expect(resent.body.outcome).toBe("success");
    expect(await refundsOfAmount("B2003", 212)).toHaveLength(1);
    const posts = await v0Posts(run);
    expect(posts.map((post) => post.status)).toEqual([502, 201]);
    // Every request carried the same derived key, which this upstream ignores.
    expect(new Set(posts.map((post) => post.idempotency_key)).size).toBe(1);
    // The resend was preceded by its read: the order read after the 502, again before the resend,
    // and once more by the success's postcondition.
    const requests = (await sandboxRequests(run.id)).filter((entry) => entry.phase === "completed");
    expect(requests.map((entry) => `${entry.method} ${entry.path}`)).toEqual([
      "POST /v0/refunds",
      "GET /orders/B2003",
      "GET /orders/B2003",
      "POST /v0/refunds",
      "GET /orders/B2003",
    ]);
  });

  it("hands the call to a human when the read cannot tell, and never sends it again", async () => {
    const run = await openRun("globex");
    await armFault(run.id, { mode: "truncated", path_prefix: "/v0/refunds", times: 1 });
    // Every read of the order fails while the case runs: the effect cannot be found or ruled out.
    await armFault(run.id, { mode: "error_500", path_prefix: "/orders", times: 50 });
    const args = { order_id: "B2005", amount_cents: 213, reason: "price_error" };
    const first = await callTool(run, "issue_refund_v0", args);
    expect(first.body.outcome).toBe("terminal_failure");
    expect(first.body.error).toMatchObject({
      side_effect_confirmed: null,
      recommended_next_action: "reconcile",
      details: { settled_by_read: { verdict: "unreadable" } },
    });
    expect(first.body.error?.message).toContain("a human settles it");
    const again = await callTool(run, "issue_refund_v0", args);
    expect(again.body.error?.recommended_next_action).toBe("reconcile");
    expect(await v0Posts(run)).toHaveLength(1);
    expect(await refundsOfAmount("B2005", 213)).toHaveLength(1);
  });
});

describe("a write to an upstream that honours keys", () => {
  it("is resent under its key as before, told so, and makes one effect", async () => {
    const run = await openRun("globex");
    await armFault(run.id, { mode: "bad_gateway", path_prefix: "/refunds", times: 1 });
    const args = { order_id: "B2003", amount_cents: 214, reason: "price_error" };
    const first = await callTool(run, "issue_refund", args);
    expect(first.body.outcome).toBe("retryable_failure");
    expect(first.body.error?.side_effect_confirmed).toBeNull();
    expect(first.body.error?.message).toContain("cannot happen twice");
    expect(first.body.error?.details).not.toHaveProperty("settled_by_read");
    const resent = await callTool(run, "issue_refund", args);
    expect(resent.body.outcome).toBe("success");
    expect(await refundsOfAmount("B2003", 214)).toHaveLength(1);
  });
});
