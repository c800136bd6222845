import { holdsRole } from "../approvals/approvers";
import type { ApprovalFilters, RunFilters } from "../approvals/list-filters";
import { tenantObject } from "../config/placement";
import type { Env } from "../env";
import { toolOfRun } from "../machine/grants";
import { catalog } from "../tools";
import type { ApprovalDuplicate, ApprovalRecord } from "../wire/approval";
import type { ApprovalDetail } from "../wire/approval-answers";
import { ledgerFor } from "./client";
import type { ApprovalPage, RunPage } from "./directory";
import type { DecideResult } from "./ledger-api";

/**
 * What an operator can do, shared by the operator API and the console so both doors reach the same
 * decisions: list and search a tenant's approvals and runs, look at one with its run's trace, approve
 * or reject it.
 */

function directoryFor(env: Env, tenant: string) {
  return tenantObject(env, env.APPROVAL_DIRECTORY, tenant, tenant);
}

/**
 * One page of the tenant's approvals, newest first, by state, tool, subject, run and time; the
 * page's `next_cursor` (null on the last page) goes back in as `filters.cursor` for the next one.
 *
 * @example
 * await listApprovals(env, "acme", { state: "all", subject: { key: null, value: "A1002" }, limit: 20 });
 */
export async function listApprovals(
  env: Env,
  tenant: string,
  filters: ApprovalFilters,
): Promise<ApprovalPage> {
  return directoryFor(env, tenant).listApprovals(filters);
}

/** One page of the tenant's runs, newest first, by state, tool called, subject named and time. */
export async function listRuns(env: Env, tenant: string, filters: RunFilters): Promise<RunPage> {
  return directoryFor(env, tenant).listRuns(filters);
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
  const [trace, duplicates, toolSet] = await Promise.all([
    ledger.readTrace(tenant),
    directoryFor(env, tenant).duplicatesOf(approvalId),
    ledger.toolSet(tenant),
  ]);
  // A tool found through use_tool may live in another of the tenant's namespaces than the run's.
  const tool = toolSet ? toolOfRun(catalog, toolSet, approval.tool) : undefined;
  return {
    approval,
    run: trace?.run ?? null,
    tool_namespace: tool?.namespace ?? null,
    trace: trace?.entries ?? [],
    duplicates,
  };
}

/**
 * A decision's outcome. Beyond the ledger's own answers, an approval is refused while another run
 * of the tenant has the same destructive call pending or gone ahead, or had acted on the same
 * business thing when the call asked (its `earlier_effects`), unless the operator confirmed they
 * mean to do it again.
 */
export type OperatorDecision =
  | DecideResult
  | {
      ok: false;
      code: "duplicate_unconfirmed";
      message: string;
      approval: ApprovalRecord;
      duplicates: ApprovalDuplicate[];
    };

export async function decideApproval(
  env: Env,
  input: {
    tenant: string;
    operator: string;
    operator_name: string | null;
    operator_roles: readonly string[];
    approvalId: string;
    decision: "approve" | "reject";
    reason: string | null;
    /** The operator saw the duplicates of this call in other runs and approves it anyway. */
    confirm_duplicate: boolean;
    /** Approve these arguments instead of the asked ones (approve with edit). */
    args?: Record<string, unknown> | null;
    /** The digest of the decision context the operator saw, for the audit receipt. */
    context_digest?: string | null;
  },
): Promise<OperatorDecision> {
  const ledger = await locate(env, input.tenant, input.approvalId);
  if (!ledger) return { ok: false, code: "not_found", message: "No such approval.", approval: null };
  if (input.decision === "approve" && !input.confirm_duplicate) {
    const read = await ledger.approval(input.tenant, input.approvalId);
    // Someone who may not decide it is refused for that by the ledger, before any duplicate.
    const approval = read && holdsRole(read.approver_roles, input.operator_roles) ? read : null;
    const duplicates =
      approval?.state === "pending"
        ? await directoryFor(env, input.tenant).duplicatesOf(input.approvalId)
        : [];
    if (approval && duplicates.length > 0) {
      const [first] = duplicates;
      return {
        ok: false,
        code: "duplicate_unconfirmed",
        message: `Another run asked for exactly this ${approval.tool} call (approval ${first?.approval_id}, ${first?.state}). Approving this one too would do it again: check the runs, then approve with confirm_duplicate: true if that is what you mean.`,
        approval,
        duplicates,
      };
    }
    const [earlier] = approval?.state === "pending" ? approval.earlier_effects : [];
    if (approval && earlier) {
      return {
        ok: false,
        code: "duplicate_unconfirmed",
        message: `Another run already acted on the same thing (${approval.tool} in run ${earlier.run_id} at ${earlier.at}, ${earlier.outcome.replace("_", " ")}). Approving this one would do it again: check the runs, then approve with confirm_duplicate: true if that is what you mean.`,
        approval,
        duplicates,
      };
    }
  }
  return ledger.decide({
    tenant: input.tenant,
    approval_id: input.approvalId,
    decision: input.decision,
    operator: input.operator,
    operator_name: input.operator_name,
    operator_roles: input.operator_roles,
    reason: input.reason,
    args: input.decision === "approve" ? (input.args ?? null) : null,
    confirm_duplicate: input.confirm_duplicate,
    context_digest: input.context_digest ?? null,
  });
}

/** A run's status and trace for an operator of its tenant; null when the run is not this tenant's. */
export function inspectRun(env: Env, tenant: string, runId: string, page: { cursor: number; limit: number }) {
  return ledgerFor(env, tenant, runId).readTracePage(tenant, page.cursor, page.limit);
}
