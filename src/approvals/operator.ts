import type { Env } from "../env";
import type { ApprovalState } from "../envelope";
import type { DecideResult } from "../ledger/run-ledger";
import { ledgerFor } from "../routes/ledger-stub";
import type { ApprovalSummary } from "../wire/approval";
import type { ApprovalDetail } from "../wire/approval-answers";

/**
 * What an operator can do, shared by the operator API and the console so both doors reach the same
 * decisions: list a tenant's approvals, look at one with its run's trace, approve or reject it.
 */

function directoryFor(env: Env, tenant: string) {
  return env.APPROVAL_DIRECTORY.get(env.APPROVAL_DIRECTORY.idFromName(tenant));
}

export async function listApprovals(
  env: Env,
  tenant: string,
  state: ApprovalState,
): Promise<ApprovalSummary[]> {
  return directoryFor(env, tenant).list(state);
}

/** The run holding an approval; null when this tenant has no such approval (another tenant's included). */
async function locate(env: Env, tenant: string, approvalId: string) {
  const runId = await directoryFor(env, tenant).runOf(approvalId);
  return runId ? ledgerFor(env, tenant, runId) : null;
}

/** One approval with its arguments, and the run's status and trace so far; null when not this tenant's. */
export async function inspectApproval(
  env: Env,
  tenant: string,
  approvalId: string,
): Promise<ApprovalDetail | null> {
  const ledger = await locate(env, tenant, approvalId);
  const approval = ledger ? await ledger.approval(tenant, approvalId) : null;
  if (!ledger || !approval) return null;
  const trace = await ledger.readTrace(tenant);
  return { approval, run: trace?.run ?? null, trace: trace?.entries ?? [] };
}

export async function decideApproval(
  env: Env,
  input: {
    tenant: string;
    operator: string;
    approvalId: string;
    decision: "approve" | "reject";
    reason: string | null;
  },
): Promise<DecideResult> {
  const ledger = await locate(env, input.tenant, input.approvalId);
  if (!ledger) return { ok: false, code: "not_found", message: "No such approval.", approval: null };
  return ledger.decide({
    tenant: input.tenant,
    approval_id: input.approvalId,
    decision: input.decision,
    operator: input.operator,
    reason: input.reason,
  });
}

/** A run's status and trace for an operator of its tenant; null when the run is not this tenant's. */
export function inspectRun(env: Env, tenant: string, runId: string) {
  return ledgerFor(env, tenant, runId).readTrace(tenant);
}
