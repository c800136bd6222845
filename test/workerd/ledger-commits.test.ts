import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  asOperator,
  callTool,
  decide,
  ledgerStubOf,
  openRun,
  request,
  sandboxRequests,
  storeRun,
  type TestRun,
  traceOf,
} from "./helpers";

/**
 * Counts the run ledger's storage transactions from now on: every commit of the ledger goes through
 * `transactionSync`, so this is the number of durable commits a call paid.
 */
async function countCommits(run: TestRun): Promise<() => Promise<number>> {
  await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
    const storage = state.storage as DurableObjectStorage & { commits?: number };
    if (storage.commits === undefined) {
      const original = storage.transactionSync.bind(storage);
      storage.transactionSync = <T>(closure: () => T): T => {
        storage.commits = (storage.commits ?? 0) + 1;
        return original(closure);
      };
    }
    storage.commits = 0;
  });
  return () =>
    runInDurableObject(
      ledgerStubOf(run),
      (_instance, state) => (state.storage as DurableObjectStorage & { commits?: number }).commits ?? 0,
    );
}

describe("what a call commits", () => {
  it("creates a run its open stored nothing of in one commit of its first call, before the call's own", async () => {
    const run = await openRun("initech");
    const commits = await countCommits(run);
    const read = await callTool(run, "lookup_order", { order_id: "I3001" });
    expect(read.body.outcome, JSON.stringify(read.body.error)).toBe("success");
    expect(await commits()).toBe(2);
    const again = await callTool(run, "lookup_order", { order_id: "I3002" });
    expect(again.body.outcome, JSON.stringify(again.body.error)).toBe("success");
    expect(await commits()).toBe(3);
    // The run's clock started at the open, not at its first call.
    const status = await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } });
    expect(status.body.data).toMatchObject({
      created_at: run.data.created_at,
      deadline_at: run.data.deadline_at,
      used: { calls_used: 2 },
    });
  });

  it("creates a run its open stored nothing of once, when its first calls arrive together", async () => {
    const run = await openRun("initech");
    const reads = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        callTool(run, "lookup_order", { order_id: `I30${String(index + 1).padStart(2, "0")}` }),
      ),
    );
    expect(reads.map((read) => read.body.error?.code ?? read.body.outcome)).toEqual(
      Array.from({ length: 12 }, () => "success"),
    );
    expect(await traceOf(run)).toHaveLength(12);
  });

  it("commits a read once, after the upstream answered, with its trace entry and the calls it spent", async () => {
    const run = await openRun("initech");
    await storeRun(run);
    const commits = await countCommits(run);
    const read = await callTool(run, "lookup_order", { order_id: "I3001" });
    expect(read.body.outcome, JSON.stringify(read.body.error)).toBe("success");
    expect(await commits()).toBe(1);
    const [entry] = await traceOf(run);
    expect(entry).toMatchObject({ tool: "lookup_order", outcome: "success", actor: "agent" });
    expect(read.body.budget?.calls_left).toBe((run.data.limits as { max_calls: number }).max_calls - 1);
  });

  it("commits a write's reservation before it leaves and its outcome after, and a replay once", async () => {
    const run = await openRun("initech");
    await storeRun(run);
    const commits = await countCommits(run);
    const args = {
      customer_id: "C301",
      summary: "Counting commits: two for a write, then one.",
      priority: "low",
    };
    const first = await callTool(run, "create_internal_ticket", args);
    expect(first.body.outcome, JSON.stringify(first.body.error)).toBe("success");
    expect(await commits()).toBe(2);
    const replay = await callTool(run, "create_internal_ticket", args);
    expect(replay.body).toMatchObject({ outcome: "success", replayed: true });
    expect(await commits()).toBe(3);
  });

  it("commits a refusal once and keeps counting concurrent identical reads for the repeat breaker", async () => {
    const run = await openRun("acme");
    await storeRun(run);
    const commits = await countCommits(run);
    const refused = await callTool(run, "lookup_order", { order_id: "B2001" });
    expect(refused.body.outcome).toBe("terminal_failure");
    expect(await commits()).toBe(1);
    // Four identical reads at once under acme's repeat threshold of 3: two go through and the
    // others are refused, although no read had committed when the later ones were admitted.
    const reads = await Promise.all(
      Array.from({ length: 4 }, () => callTool(run, "lookup_order", { order_id: "A1001" })),
    );
    const codes = reads.map((read) => read.body.error?.code ?? "success").sort();
    expect(codes).toEqual(["repeat_detected", "repeat_detected", "success", "success"]);
  });

  it("commits an operator's approval once before its request leaves, expiring there the approvals it leaves without budget, and its outcome once", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_destructive: 1 } });
    const refund = (amount_cents: number) => ({ order_id: "A1001", amount_cents, reason: "user_cancel" });
    const first = await callTool(run, "issue_refund", refund(121));
    const second = await callTool(run, "issue_refund", refund(122));
    expect([first.body.error?.code, second.body.error?.code]).toEqual([
      "approval_required",
      "approval_required",
    ]);
    const commits = await countCommits(run);
    const approved = await decide(first.body.approval?.id ?? "", "approve");
    expect(approved.status).toBe(200);
    expect(await commits()).toBe(2);
    const other = await asOperator(`/v1/approvals/${second.body.approval?.id ?? ""}`);
    expect(other.body.data).toMatchObject({
      approval: { state: "expired", decision_reason: "the run's max_destructive budget is spent" },
    });
  });

  it("answers read_result_page from the run's own pages, sending nothing upstream and committing once", async () => {
    const run = await openRun("initech");
    await storeRun(run);
    const commits = await countCommits(run);
    const page = await callTool(run, "read_result_page", { handle: `res_${"0".repeat(24)}`, cursor: 0 });
    expect(page.body.error?.code).toBe("not_found");
    expect(await commits()).toBe(1);
    expect(await sandboxRequests(run.id)).toEqual([]);
    const [entry] = await traceOf(run);
    expect(entry).toMatchObject({ tool: "read_result_page", error_code: "not_found", actor: "agent" });
  });
});
