import { describe, expect, it } from "vitest";
import { passDeadline } from "./clock";
import { callTool, openRun, request, type TestRun } from "./helpers";

const statusOf = async (run: TestRun) =>
  (await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } })).body;

describe("budgets that throw", () => {
  it("lets exactly N calls through and refuses the N+1th, naming the limit", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_calls: 3 } });
    const answers = [];
    for (const order of ["A1001", "A1002", "A1003"])
      answers.push(await callTool(run, "lookup_order", { order_id: order }));
    expect(answers.map(({ body }) => body.outcome)).toEqual(["success", "success", "success"]);
    expect(answers.map(({ body }) => body.budget?.calls_left)).toEqual([2, 1, 0]);

    const refused = await callTool(run, "lookup_order", { order_id: "A1004" });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: "budget_exhausted",
      recommended_next_action: "stop",
      details: { limit: "max_calls" },
    });
    expect(refused.body.error?.message).toContain("max_calls");
  });

  it("charges invalid calls before anything else", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_calls: 2 } });
    await callTool(run, "lookup_order", { orderId: "A1001" });
    await callTool(run, "no_such_tool", {});
    const refused = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(refused.body.error?.details?.limit).toBe("max_calls");
  });

  it("lets exactly N destructive executions happen; a replay spends none", async () => {
    // globex auto-approves small refunds, so these run without an operator.
    const run = await openRun("globex", { namespace: "support", limits: { max_destructive: 1 } });
    const args = { order_id: "B2003", amount_cents: 150, reason: "price_error" };
    const first = await callTool(run, "issue_refund", args);
    expect(first.body.outcome).toBe("success");
    expect(first.body.budget?.destructive_left).toBe(0);
    const replay = await callTool(run, "issue_refund", args);
    expect(replay.body.replayed).toBe(true);
    const another = await callTool(run, "issue_refund", { ...args, amount_cents: 151 });
    expect(another.body.error).toMatchObject({
      code: "budget_exhausted",
      details: { limit: "max_destructive" },
    });
  });

  it("lets exactly N writes happen", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_writes: 2 } });
    const ticket = (n: number) =>
      callTool(run, "create_internal_ticket", {
        customer_id: "C100",
        priority: "low",
        summary: `Follow-up number ${n} for the customer.`,
      });
    expect((await ticket(1)).body.budget?.writes_left).toBe(1);
    expect((await ticket(2)).body.budget?.writes_left).toBe(0);
    expect((await ticket(3)).body.error?.details?.limit).toBe("max_writes");
  });

  it("refuses calls after the deadline", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { deadline_s: 60 } });
    expect(
      (await callTool(run, "lookup_order", { order_id: "A1001" })).body.budget?.deadline_ms_left,
    ).toBeGreaterThan(0);
    await passDeadline(run);
    const refused = await callTool(run, "lookup_order", { order_id: "A1002" });
    expect(refused.body.error).toMatchObject({ code: "budget_exhausted", details: { limit: "deadline" } });
    expect(refused.body.budget?.deadline_ms_left).toBe(0);
    expect((await statusOf(run)).data).toMatchObject({ state: "expired" });
  });

  it("reports counters and what is left", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_calls: 10, max_writes: 3 } });
    await callTool(run, "lookup_order", { order_id: "A1001" });
    await callTool(run, "create_internal_ticket", {
      customer_id: "C101",
      priority: "normal",
      summary: "Customer wants to change the address.",
    });
    const status = await statusOf(run);
    expect(status.data).toMatchObject({
      run_id: run.id,
      state: "open",
      limits: { max_calls: 10, max_writes: 3, max_destructive: 1, deadline_s: 120 },
      used: { calls_used: 2, writes_used: 1, destructive_used: 0 },
      budget: { calls_left: 8, writes_left: 2, destructive_left: 1 },
    });
  });

  it("uses the documented defaults", async () => {
    const run = await openRun("acme");
    expect(run.data.limits).toEqual({ max_calls: 20, max_writes: 5, max_destructive: 1, deadline_s: 120 });
  });

  it("closes a run: later calls get run_closed", async () => {
    const run = await openRun("acme");
    const ended = await request(`/v1/runs/${run.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.token}` },
    });
    expect(ended.body.data).toMatchObject({ state: "closed" });
    const refused = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(refused.status).toBe(409);
    expect(refused.body.error?.code).toBe("run_closed");
  });
});

describe("the repeat breaker", () => {
  it("refuses the third identical call, reads included, and asks for a human", async () => {
    const run = await openRun("acme");
    const args = { order_id: "A1003" };
    expect((await callTool(run, "lookup_order", args)).body.outcome).toBe("success");
    expect((await callTool(run, "lookup_order", { order_id: "A1003" })).body.outcome).toBe("success");
    const third = await callTool(run, "lookup_order", args);
    expect(third.body.error).toMatchObject({
      code: "repeat_detected",
      recommended_next_action: "escalate_to_human",
      details: { earlier_identical_calls: 2, threshold: 3 },
    });
    expect((await callTool(run, "lookup_order", { order_id: "A1004" })).body.outcome).toBe("success");
  });

  it("counts arguments canonically: reordered keys are the same call", async () => {
    const run = await openRun("acme");
    const draft = { customer_id: "C100", template: "apology", order_id: "A1001" };
    await callTool(run, "draft_customer_email", draft);
    await callTool(run, "draft_customer_email", {
      order_id: "A1001",
      template: "apology",
      customer_id: "C100",
    });
    expect((await callTool(run, "draft_customer_email", draft)).body.error?.code).toBe("repeat_detected");
  });

  it("takes its threshold from the tenant", async () => {
    const run = await openRun("initech");
    for (let call = 0; call < 4; call++) {
      expect((await callTool(run, "lookup_order", { order_id: "I3003" })).body.outcome).toBe("success");
    }
  });
});
