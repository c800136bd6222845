import { describe, expect, it } from "vitest";
import { eventually, hasSettled } from "./eventually";
import { callTool, decide, openRun, refund, refundsOfRun, type TestRun, traceOf } from "./helpers";

/**
 * Polls that cost nothing: asking again about an approval still pending is answered with the wait
 * and spends no call budget (the run's call rate bounds an eager loop), and a caller may ask to
 * wait for the decision instead (`Prefer: wait=<seconds>`).
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
  it("costs no call budget, however often, and the trace marks each poll", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1001", 300));
    expect(asked.body.error?.code).toBe("approval_required");
    const left = asked.body.budget?.calls_left;
    for (let poll = 0; poll < 8; poll++) {
      const again = await callTool(run, "issue_refund", refund("A1001", 300));
      expect(again.body.error?.code).toBe("approval_required");
      expect(again.body.approval?.id).toBe(asked.body.approval?.id);
      expect(again.body.budget?.calls_left).toBe(left);
    }
    const entries = await traceOf(run);
    expect(entries).toHaveLength(9);
    expect(entries[0]?.poll).toBeUndefined();
    expect(entries.slice(1).every((entry) => entry.poll === true)).toBe(true);
  });

  it("is answered even when the run's calls are spent, and the approval still executes", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_calls: 2 } });
    expect((await callTool(run, "lookup_order", { order_id: "A1002" })).body.outcome).toBe("success");
    const asked = await callTool(run, "issue_refund", refund("A1002", 300));
    expect(asked.body.budget?.calls_left).toBe(0);
    const poll = await callTool(run, "issue_refund", refund("A1002", 300));
    expect(poll.body.error?.code).toBe("approval_required");
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
