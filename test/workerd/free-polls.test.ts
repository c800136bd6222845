import { describe, expect, it } from "vitest";
import { eventually, hasSettled } from "./eventually";
import { callTool, decide, openRun, refund, refundsOfRun, type TestRun, traceOf } from "./helpers";

/**
 * What polls cost: asking again about an approval still pending is answered with the wait, never as
 * a repeat; a poll that keeps the hint's pace, or waits for the decision at the proxy (`Prefer:
 * wait=<seconds>`), spends no call budget, and one sooner than the hint is charged as a call
 * (src/machine/poll-price.ts; the pace itself is unit-tested in test/unit/admission-machine.test.ts,
 * since a test here cannot wait out the 30 s hint).
 */

/**
 * Until a waiting call has made its poll (its trace entry is the run's second): in the same turn
 * the ledger starts waiting for the decision, so one that lands after this wakes it. The call is
 * still waiting then, not answered.
 */
async function pollTraced(run: TestRun, waiting: Promise<unknown>): Promise<void> {
  await eventually("the waiting call's poll in the trace", async () =>
    (await traceOf(run)).length === 2 ? true : undefined,
  );
  expect(await hasSettled(waiting)).toBe(false);
}

describe("polling a pending approval", () => {
  it("charges a poll sooner than the hint as a call, never as a repeat, and the trace marks each poll", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1001", 300));
    expect(asked.body.error?.code).toBe("approval_required");
    expect(asked.body.error?.message).toContain("asking sooner than retry_after_ms costs a call");
    const left = asked.body.budget?.calls_left ?? 0;
    for (let poll = 1; poll <= 4; poll++) {
      const again = await callTool(run, "issue_refund", refund("A1001", 300));
      expect(again.body.error?.code).toBe("approval_required");
      expect(again.body.approval?.id).toBe(asked.body.approval?.id);
      expect(again.body.budget?.calls_left).toBe(left - poll);
    }
    const entries = await traceOf(run);
    expect(entries).toHaveLength(5);
    expect(entries[0]?.poll).toBeUndefined();
    expect(entries.slice(1).every((entry) => entry.poll === true && entry.poll_charged === true)).toBe(true);
  });

  it("refuses an eager poll once the run's calls are spent; the approval still executes", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_calls: 2 } });
    expect((await callTool(run, "lookup_order", { order_id: "A1002" })).body.outcome).toBe("success");
    const asked = await callTool(run, "issue_refund", refund("A1002", 300));
    expect(asked.body.budget?.calls_left).toBe(0);
    const poll = await callTool(run, "issue_refund", refund("A1002", 300));
    expect(poll.body.error).toMatchObject({ code: "budget_exhausted", details: { limit: "max_calls" } });
    expect(poll.body.error?.message).toContain("Prefer: wait");
    expect(poll.body.approval).toMatchObject({ id: asked.body.approval?.id, state: "pending" });
    // Another call is refused: the budget is spent.
    expect((await callTool(run, "lookup_order", { order_id: "A1002" })).body.error?.code).toBe(
      "budget_exhausted",
    );
    expect((await decide(asked.body.approval?.id ?? "", "approve", "ok")).status).toBe(200);
    expect(await refundsOfRun("A1002", run)).toHaveLength(1);
  });
});

describe("Prefer: wait", () => {
  it("answers with the executed call as soon as an operator approves it", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1004", 300));
    const waiting = callTool(run, "issue_refund", refund("A1004", 300), { prefer: "wait=20" });
    // The decision lands while the call waits.
    await pollTraced(run, waiting);
    expect((await decide(asked.body.approval?.id ?? "", "approve", "ok")).status).toBe(200);
    const answered = await waiting;
    expect(answered.body.outcome, JSON.stringify(answered.body.error)).toBe("success");
    expect(answered.body.approval).toMatchObject({ id: asked.body.approval?.id, state: "executed" });
    expect(await refundsOfRun("A1004", run)).toHaveLength(1);
    // The wait was a poll, free however soon it came; fetching the result is a call, as any replay.
    const [, poll] = await traceOf(run);
    expect(poll).toMatchObject({ poll: true });
    expect(poll?.poll_charged).toBeUndefined();
    expect(answered.body.budget?.calls_left).toBe((asked.body.budget?.calls_left ?? 0) - 1);
  });

  it("is answered even once the run's calls are spent: a wait for the decision is free", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_calls: 1 } });
    const asked = await callTool(run, "issue_refund", refund("A1003", 300));
    expect(asked.body.budget?.calls_left).toBe(0);
    const waiting = callTool(run, "issue_refund", refund("A1003", 300), { prefer: "wait=20" });
    await pollTraced(run, waiting);
    expect((await decide(asked.body.approval?.id ?? "", "approve", "ok")).status).toBe(200);
    // The refund ran; only the result's fetch after the decision is a call the run no longer has.
    expect((await waiting).body.error?.code).toBe("budget_exhausted");
    expect(await refundsOfRun("A1003", run)).toHaveLength(1);
    expect((await traceOf(run))[1]).toMatchObject({ poll: true });
  });

  it("answers a rejection as soon as it lands", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1005", 300));
    const waiting = callTool(run, "issue_refund", refund("A1005", 300), { prefer: "respond-async, wait=20" });
    await pollTraced(run, waiting);
    expect((await decide(asked.body.approval?.id ?? "", "reject", "not this one")).status).toBe(200);
    expect((await waiting).body.error?.code).toBe("approval_rejected");
  });

  it("refuses a wait that is not a number of seconds, naming the header, and charges nothing", async () => {
    const run = await openRun("acme");
    for (const prefer of ["wait=soon", "wait=-3", "wait=1.5", "wait"]) {
      const refused = await callTool(run, "lookup_order", { order_id: "A1001" }, { prefer });
      expect(refused.status, prefer).toBe(422);
      expect(refused.body.error?.problems?.[0]?.field).toBe("Prefer");
    }
    expect(await traceOf(run)).toHaveLength(0);
    // Other preferences alone are ignored.
    expect(
      (await callTool(run, "lookup_order", { order_id: "A1001" }, { prefer: "return=minimal" })).status,
    ).toBe(200);
  });
});
