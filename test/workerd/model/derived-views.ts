import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { ApprovalListItem } from "../../../src/wire/approval";
import type { RunSummary } from "../../../src/wire/run-summary";
import { asOperator, failDirectoryWritesOf, ledgerStubOf, restartDurableObject } from "../helpers";
import { checkAuditOf } from "./audit-checks";
import type { RunModel, TenantName } from "./reference";
import { violated } from "./violation";

/**
 * The operators' lists as the model-based test sees them: the tenant's directory, which a run's
 * ledger feeds through its outbox. The test can make a directory refuse writes (as one that is down
 * would) so that a ledger's commit and its delivery come apart, and checks rule 8 once things are
 * quiet: the lists equal what the ledgers hold.
 */

function directoryOf(tenant: TenantName) {
  return env.APPROVAL_DIRECTORY.get(env.APPROVAL_DIRECTORY.idFromName(tenant));
}

/**
 * Tenants whose directory refuses writes now. Kept here, not in a sequence's model, because the
 * patched instance outlives a failed sequence: the next one (a shrink) starts by restoring it.
 */
const refusing = new Set<TenantName>();

export function directoryRefusesWrites(tenant: TenantName): boolean {
  return refusing.has(tenant);
}

/**
 * The tenant's directory refuses every write of an approval or a run, on its live instance, until
 * it restarts; it still answers lists and lookups, so operators see what it held before.
 */
export async function refuseDirectoryWrites(tenant: TenantName): Promise<void> {
  refusing.add(tenant);
  await failDirectoryWritesOf(tenant);
}

/** The directory back up: a fresh instance, with everything it stored before it failed. */
export async function restoreDirectory(tenant: TenantName): Promise<void> {
  if (!refusing.delete(tenant)) return;
  await restartDurableObject(directoryOf(tenant));
}

export async function restoreEveryDirectory(): Promise<void> {
  for (const tenant of [...refusing]) await restoreDirectory(tenant);
}

/** Every Durable Object was aborted, directories included: none is patched any more. */
export function forgetRefusingDirectories(): void {
  refusing.clear();
}

/**
 * What the ledger's alarm does when it rings: reconcile, expire, and deliver what the directory is
 * still owed. Rung now instead of waited for; a ledger always has an alarm (its retention at least).
 */
export async function ringLedgerAlarm(run: RunModel): Promise<void> {
  await runDurableObjectAlarm(ledgerStubOf(run.handle));
}

interface LedgerTruth {
  /** Whether the ledger holds the run: an open stores nothing, and the run's first request creates it. */
  stored: boolean;
  approvals: Record<string, string>;
  closed: boolean;
}

/** The run's approvals and state as its own ledger holds them: the truth the lists derive from. */
async function ledgerTruthOf(run: RunModel): Promise<LedgerTruth> {
  return runInDurableObject(ledgerStubOf(run.handle), (_instance, state) => {
    const sql = state.storage.sql;
    const schema = sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'run'").toArray();
    if (schema.length === 0) return { stored: false, approvals: {}, closed: false };
    const rows = sql.exec<{ id: string; state: string }>("SELECT id, state FROM approvals").toArray();
    const runRow = sql.exec<{ state: string }>("SELECT state FROM run").toArray()[0];
    return {
      stored: runRow !== undefined,
      approvals: Object.fromEntries(rows.map((row) => [row.id, row.state])),
      closed: runRow?.state === "closed",
    };
  });
}

/** The approvals of one run as the tenant's operators list them (`GET /v1/approvals?state=all`). */
async function listedApprovalsOf(run: RunModel): Promise<Record<string, string>> {
  const { status, body } = await asOperator(
    `/v1/approvals?state=all&run_id=${run.handle.id}&limit=100`,
    {},
    run.tenant,
  );
  if (status !== 200) throw new Error(`listing approvals failed: ${JSON.stringify(body.error)}`);
  const items = (body.data as { approvals: ApprovalListItem[] }).approvals;
  return Object.fromEntries(items.map((item) => [item.id, item.state]));
}

/** The run as the operators' run list shows it; sequences are the newest runs, so the first page holds it. */
async function listedRunOf(run: RunModel): Promise<RunSummary | undefined> {
  const { body } = await asOperator("/v1/runs?state=all&limit=100", {}, run.tenant);
  return (body.data as { runs: RunSummary[] }).runs.find((entry) => entry.run_id === run.handle.id);
}

/**
 * Rule 8, once the run is quiet (nothing in flight, its directory up, its alarm rung): every
 * approval its ledger holds is listed in the state the ledger holds, none is listed that it does
 * not hold, a run its ledger holds is listed (closed when it closed it), and one it does not hold
 * (no request reached it) is not.
 */
export async function checkViewsConverge(run: RunModel): Promise<void> {
  const [truth, listed, listedRun] = await Promise.all([
    ledgerTruthOf(run),
    listedApprovalsOf(run),
    listedRunOf(run),
  ]);
  const ids = new Set([...Object.keys(truth.approvals), ...Object.keys(listed)]);
  const differing = [...ids].filter((id) => truth.approvals[id] !== listed[id]);
  if (differing.length > 0) {
    violated("8", `the operators' list of the ${run.tenant} run's approvals differs from its ledger`, {
      ledger: truth.approvals,
      listed,
    });
  }
  // A run no request reached is stored nowhere, and listed nowhere; any other is listed.
  if (!truth.stored) {
    if (listedRun) violated("8", `the operators' run list shows a ${run.tenant} run its ledger never stored`);
    return;
  }
  if (!listedRun) violated("8", `the operators' run list never heard of the ${run.tenant} run`);
  if (truth.closed && listedRun.state !== "closed") {
    violated("8", `the ${run.tenant} run's ledger closed it, but operators see it ${listedRun.state}`);
  }
}

/**
 * The sequence goes quiet: every directory back, every ledger's alarm rung, then rule 8 for each
 * run and rule 13 for their tenants' audit logs. Also what a directory's recovery does for the runs
 * of its tenant.
 */
export async function settleAndCheckViews(runs: readonly RunModel[]): Promise<void> {
  for (const run of runs) await restoreDirectory(run.tenant);
  for (const run of runs) await ringLedgerAlarm(run);
  for (const run of runs) await checkViewsConverge(run);
  await checkAuditOf(runs);
}
