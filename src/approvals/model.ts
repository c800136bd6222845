import type { ApprovalRecord, ApprovalSummary } from "../wire/approval";
import type { ApprovalBlock } from "../wire/envelope";

/** The wire schemas' types: src/wire/approval.ts is their one definition. */
export type { ApprovalRecord, ApprovalSummary } from "../wire/approval";

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
    args: record.args,
    args_digest: record.args_digest,
    reasons: record.reasons,
    created_at: record.created_at,
    expires_at: record.expires_at,
    decided_at: record.decided_at,
    decided_by: record.decided_by,
    decided_by_name: record.decided_by_name,
  };
}

export function approvalBlock(record: Pick<ApprovalRecord, "id" | "state" | "expires_at">): ApprovalBlock {
  return { id: record.id, state: record.state, expires_at: record.expires_at };
}
