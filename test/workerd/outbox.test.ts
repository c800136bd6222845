import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalSummary } from "../../src/approvals/model";
import type { ApprovalListItem } from "../../src/wire/approval";
import type { RunSummary } from "../../src/wire/run-summary";
import { passDeadline } from "./clock";
import {
  asOperator,
  callTool,
  decide,
  failDirectoryWritesOf,
  ledgerStubOf,
  openRun,
  request,
  restartDurableObject,
  type TestRun,
} from "./helpers";

/**
 * Derived views converge: what a run's ledger commits reaches the tenant's directory (the operators'
 * lists) even when the directory fails, or the ledger dies, between the commit and the delivery.
 * The ledger is the truth; after any fault the lists equal it once its alarm has run.
 */

function directoryOf(tenant: string) {
  return env.APPROVAL_DIRECTORY.get(env.APPROVAL_DIRECTORY.idFromName(tenant));
}

/** Tenants whose directory a test made fail, recovered after it whatever its result. */
const failing = new Set<string>();

/**
 * The tenant's directory refuses every write of an approval or a run until it restarts, as one that
 * is down or overloaded would; it still answers the lists, so a test can see what operators see.
 */
async function failDirectoryWrites(tenant: string): Promise<void> {
  failing.add(tenant);
  await failDirectoryWritesOf(tenant);
}

/** The directory back up: a fresh instance, with everything it stored before it failed. */
async function recoverDirectory(tenant: string): Promise<void> {
  failing.delete(tenant);
  await restartDurableObject(directoryOf(tenant));
}

afterEach(async () => {
  for (const tenant of failing) await recoverDirectory(tenant);
});

async function listed(run: TestRun, state: "pending" | "all"): Promise<ApprovalListItem[]> {
  const { status, body } = await asOperator(`/v1/approvals?state=${state}&run_id=${run.id}`);
  expect(status, JSON.stringify(body.error)).toBe(200);
  return (body.data as { approvals: ApprovalListItem[] }).approvals;
}

const idsOf = (items: ApprovalListItem[]) => items.map((item) => item.id).sort();

/** The run as the operators' run list shows it. */
async function listedRun(run: TestRun): Promise<RunSummary | undefined> {
  const { body } = await asOperator("/v1/runs?state=all&limit=100");
  return (body.data as { runs: RunSummary[] }).runs.find((entry) => entry.run_id === run.id);
}

/** The approval as its run's ledger holds it: the truth the lists are derived from. */
async function inLedger(approvalId: string): Promise<string | undefined> {
  const { body } = await asOperator(`/v1/approvals/${approvalId}`);
  return (body.data as { approval?: { state: string } }).approval?.state;
}

async function askRefund(run: TestRun, amount_cents: number): Promise<string> {
  const asked = await callTool(run, "issue_refund", {
    order_id: "A1001",
    amount_cents,
    reason: "user_cancel",
  });
  expect(asked.body.error?.code, JSON.stringify(asked.body.error)).toBe("approval_required");
  return asked.body.approval?.id ?? "";
}

const endRun = (run: TestRun) =>
  request(`/v1/runs/${run.id}/end`, { method: "POST", headers: { authorization: `Bearer ${run.token}` } });

describe("the operators' lists converge on the ledgers", () => {
  it("keeps a change the directory failed to take and delivers it when the ledger's alarm runs", async () => {
    const run = await openRun("acme");
    const id = await askRefund(run, 4101);
    expect(idsOf(await listed(run, "pending"))).toEqual([id]);

    await failDirectoryWrites("acme");
    const ended = await endRun(run);
    // The run ended: the directory's failure is the ledger's to retry, not the agent's problem.
    expect(ended.status, JSON.stringify(ended.body.error)).toBe(200);
    expect(await inLedger(id)).toBe("expired");
    expect(idsOf(await listed(run, "pending"))).toEqual([id]);
    expect((await listedRun(run))?.state).toBe("open");

    await recoverDirectory("acme");
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    expect(await listed(run, "pending")).toEqual([]);
    expect(await listed(run, "all")).toEqual([expect.objectContaining({ id, state: "expired" })]);
    expect((await listedRun(run))?.state).toBe("closed");
  });

  it("heals the list of a run killed while its approval expired the others (F2)", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_destructive: 1 } });
    const [first, second, third] = [
      await askRefund(run, 4201),
      await askRefund(run, 4202),
      await askRefund(run, 4203),
    ];
    // Another run asks for one of the same refunds: the operator is warned of it while it is live.
    const twin = await openRun("acme");
    const twinId = await askRefund(twin, 4202);
    expect(await listed(twin, "pending")).toEqual([expect.objectContaining({ id: twinId, duplicates: 1 })]);

    await failDirectoryWrites("acme");
    const approved = await decide(first ?? "", "approve");
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);
    expect(approved.body.data).toMatchObject({ approval: { state: "executed" } });
    // The ledger dies before any retry: what it owes the directory must survive it.
    await restartDurableObject(ledgerStubOf(run));

    expect([await inLedger(second ?? ""), await inLedger(third ?? "")]).toEqual(["expired", "expired"]);
    expect(idsOf(await listed(run, "pending"))).toEqual([first, second, third].sort());
    expect(await listed(twin, "pending")).toEqual([expect.objectContaining({ id: twinId, duplicates: 1 })]);

    await recoverDirectory("acme");
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    expect(await listed(run, "pending")).toEqual([]);
    const states = Object.fromEntries((await listed(run, "all")).map((item) => [item.id, item.state]));
    expect(states).toEqual({
      [first ?? ""]: "executed",
      [second ?? ""]: "expired",
      [third ?? ""]: "expired",
    });
    expect(await listed(twin, "pending")).toEqual([expect.objectContaining({ id: twinId, duplicates: 0 })]);
  });

  it("republishes an approval whose decision was refused because the ledger had moved on", async () => {
    const run = await openRun("acme");
    const id = await askRefund(run, 4301);
    const [pending] = await listed(run, "pending");
    expect((await endRun(run)).status).toBe(200);
    expect(await listed(run, "pending")).toEqual([]);
    // The directory's copy as a lost delivery would have left it: still pending.
    await runInDurableObject(directoryOf("acme"), (_instance, state) => {
      const { duplicates: _, ...summary } = pending as ApprovalListItem;
      state.storage.sql.exec(
        "UPDATE approvals SET state = 'pending', decided_at = NULL, summary = ? WHERE id = ?",
        JSON.stringify(summary),
        id,
      );
    });
    expect(idsOf(await listed(run, "pending"))).toEqual([id]);

    const refused = await decide(id, "approve");
    expect(refused.status).toBe(409);
    expect(refused.body.error?.message).toContain("already expired");
    // At once, without waiting for any alarm.
    expect(await listed(run, "pending")).toEqual([]);
    expect(await listed(run, "all")).toEqual([expect.objectContaining({ id, state: "expired" })]);
  });

  it("lists a run ended after its deadline as closed: the end is news even once the deadline was told", async () => {
    const run = await openRun("acme");
    expect((await callTool(run, "lookup_order", { order_id: "A1001" })).body.outcome).toBe("success");
    await passDeadline(run);
    // The restarted ledger meets the passed deadline at its alarm and tells the directory so.
    await runDurableObjectAlarm(ledgerStubOf(run));
    const ended = await request(`/v1/runs/${run.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.token}` },
    });
    expect(ended.status).toBe(200);
    expect((await listedRun(run))?.state).toBe("closed");
  });

  it("never moves an approval back when an older summary arrives after a newer one", async () => {
    const run = await openRun("acme");
    const id = await askRefund(run, 4401);
    const [pending] = await listed(run, "pending");
    const { duplicates: _, ...older } = pending as ApprovalListItem;
    expect((await decide(id, "reject", "not this customer")).status).toBe(200);
    const [rejected] = await listed(run, "all");
    expect(rejected).toMatchObject({
      id,
      state: "rejected",
      decided_by: expect.stringMatching(/^operator:/),
    });

    // A delivery of the pending summary retried late, after the decision was delivered.
    const directory = directoryOf("acme");
    await directory.upsert(older satisfies ApprovalSummary, "acme");
    expect(await listed(run, "pending")).toEqual([]);
    expect(await listed(run, "all")).toEqual([rejected]);
    // The decision itself delivered again changes nothing.
    const { duplicates: __, ...newer } = rejected as ApprovalListItem;
    await directory.upsert(newer, "acme");
    expect(await listed(run, "all")).toEqual([rejected]);
  });
});
