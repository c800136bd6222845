import type { ApprovalBlock, ApprovalState, Envelope } from "../envelope";

/** Approvals outlive nothing: they are granted within this window or expire. */
export const APPROVAL_TTL_MS = 24 * 60 * 60 * 1000;
/** How long an agent is told to wait before asking again about a pending approval. */
export const APPROVAL_POLL_MS = 30_000;

/**
 * One human decision about one exact call: bound to the run, the tool, the idempotency key (and so
 * the canonical arguments), the digest of those arguments and the policy version it was asked under.
 */
export interface ApprovalRecord {
  id: string;
  tenant: string;
  run_id: string;
  tool: string;
  side_effect: string;
  idempotency_key: string;
  args: Record<string, unknown>;
  args_digest: string;
  policy_version: string;
  reasons: string[];
  state: ApprovalState;
  requested_call_id: string;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  decision_reason: string | null;
  /** The envelope of the execution, once the approved call ran. */
  result: Envelope | null;
}

/** What the tenant-wide directory keeps of an approval, for listing without waking every run. */
export interface ApprovalSummary {
  id: string;
  run_id: string;
  tool: string;
  side_effect: string;
  state: ApprovalState;
  args: Record<string, unknown>;
  reasons: string[];
  created_at: string;
  expires_at: string;
  decided_by: string | null;
}

export function summarize(record: ApprovalRecord): ApprovalSummary {
  return {
    id: record.id,
    run_id: record.run_id,
    tool: record.tool,
    side_effect: record.side_effect,
    state: record.state,
    args: record.args,
    reasons: record.reasons,
    created_at: record.created_at,
    expires_at: record.expires_at,
    decided_by: record.decided_by,
  };
}

export function approvalBlock(record: Pick<ApprovalRecord, "id" | "state" | "expires_at">): ApprovalBlock {
  return { id: record.id, state: record.state, expires_at: record.expires_at };
}

export function newApprovalId(): string {
  return `apr_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}
