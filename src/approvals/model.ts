import type { ApprovalRecord, ApprovalSummary } from "../wire/approval";
import type { ApprovalBlock, ApprovalState } from "../wire/envelope";
import type { ApprovalUser, RunUser } from "../wire/run-user";

/** The wire schemas' types: src/wire/approval.ts is their one definition. */
export type { ApprovalRecord, ApprovalSummary } from "../wire/approval";

/** What an operator's edit changes of an approval: it then binds the edited call. */
export type EditedApproval = Pick<
  ApprovalRecord,
  | "idempotency_key"
  | "args"
  | "args_digest"
  | "reasons"
  | "approver_roles"
  | "approvals_required"
  | "approvers"
  | "earlier_effects"
  | "limit"
> & { edit: NonNullable<ApprovalRecord["edit"]> };

/** What an agent's withdrawal of its approval request expires it with, so its result can say so. */
export const WITHDRAWN_PREFIX = "withdrawn by the agent";

/** Approvals outlive nothing: they are granted within this window or expire. */
export const APPROVAL_TTL_MS = 24 * 60 * 60 * 1000;
/** How long an agent is told to wait before asking again about a pending approval. */
export const APPROVAL_POLL_MS = 30_000;

export function summarize(record: ApprovalRecord): ApprovalSummary {
  return {
    id: record.id,
    run_id: record.run_id,
    tool: record.tool,
    side_effect: record.side_effect,
    state: record.state,
    execution: record.execution,
    args: record.args,
    args_digest: record.args_digest,
    reasons: record.reasons,
    created_at: record.created_at,
    expires_at: record.expires_at,
    sla_due_at: record.sla_due_at,
    overdue: record.overdue,
    escalated_at: record.escalated_at,
    decided_at: record.decided_at,
    decided_by: record.decided_by,
    decided_by_name: record.decided_by_name,
    approver_roles: record.approver_roles,
    approvals_required: record.approvals_required,
    approvers: record.approvers,
    user: record.user,
  };
}

/** The run's user as an approval names them, or null for a run that acts for no user. */
export function approvalUserOf(user: RunUser | null | undefined): ApprovalUser | null {
  return user ? { sub: user.sub, iss: user.iss, name: user.name } : null;
}

/**
 * Whether an approval waits past the time its decision was due: pending, with an SLA, past it.
 * Worked out whenever an approval is read, so it never goes stale in a stored copy.
 */
export function isOverdue(
  approval: Pick<ApprovalRecord, "state" | "sla_due_at" | "expires_at">,
  now: number,
): boolean {
  if (approval.state !== "pending" || approval.sla_due_at === null) return false;
  return Date.parse(approval.sla_due_at) <= now && now < Date.parse(approval.expires_at);
}

/**
 * When an approval opened at `now` is due: its tool's SLA, else the tenant's; none when neither
 * sets one or the approval expires first (then its expiry is what ends the wait).
 */
export function slaDueAt(now: number, expiresAt: number, slaMs: number | null): number | null {
  if (slaMs === null) return null;
  const due = now + slaMs;
  return due < expiresAt ? due : null;
}

export function approvalBlock(
  record: Pick<ApprovalRecord, "id" | "state" | "expires_at"> &
    Partial<Pick<ApprovalRecord, "edit" | "args">>,
): ApprovalBlock {
  const block: ApprovalBlock = { id: record.id, state: record.state, expires_at: record.expires_at };
  if (!record.edit || !record.args) return block;
  const { asked_args, fields, by_name } = record.edit;
  return { ...block, edit: { asked_args, approved_args: record.args, fields, by_name } };
}

/**
 * How far along its one-way path each state is: pending, then a decision (approved, rejected, or
 * expired by the proxy), then, once approved, executed. An approval reaches one decision only;
 * rejected and expired rank above approved because an approval can still end either way after it
 * was approved (its execution refused), never be approved after either.
 */
const STATE_ORDER = {
  pending: 0,
  approved: 1,
  rejected: 2,
  expired: 2,
  executed: 3,
} as const satisfies Record<ApprovalState, number>;

/** Where a summary stands on its approval's one-way path: its state, when decided, how many approved. */
export interface SummaryPosition extends Pick<ApprovalSummary, "state" | "decided_at"> {
  /** How many approvals it records (`approvers.length`): only grows while the approval is pending. */
  approved: number;
  /** What its call did, once known: an approved one's only moves from nothing to in doubt. */
  execution?: ApprovalSummary["execution"] | undefined;
}

export function positionOf(summary: ApprovalSummary): SummaryPosition {
  return {
    state: summary.state,
    decided_at: summary.decided_at,
    approved: summary.approvers.length,
    execution: summary.execution,
  };
}

/**
 * Whether a summary is older than the copy already held, and must not replace it: an earlier state,
 * the same state decided earlier, a pending one with fewer approvals recorded (a "0 of 2" after
 * the "1 of 2"), or an approved one that does not yet know its call is in doubt. The directory is written by an outbox that retries, so the same summary may arrive
 * twice (not older: applying it again changes nothing) and an older one may arrive after a newer one
 * (a delivery that failed, retried after the next change was delivered).
 */
export function isOlderSummary(incoming: SummaryPosition, held: SummaryPosition): boolean {
  const order = STATE_ORDER[incoming.state] - STATE_ORDER[held.state];
  if (order !== 0) return order < 0;
  if (incoming.approved !== held.approved) return incoming.approved < held.approved;
  // An approved call's copy "in doubt" is newer than one sent while the call was on its way.
  if (incoming.state === "approved" && !incoming.execution && held.execution) return true;
  return incoming.decided_at !== null && held.decided_at !== null && incoming.decided_at < held.decided_at;
}
