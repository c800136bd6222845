/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import { approvalProgress } from "../../approvals/approvers";
import type { ApprovalSummary } from "../../approvals/model";

/**
 * How far a listed approval that needs more than one operator has come ("1 of 2 approvals", and
 * by whom), so a list shows a first approval without opening the approval. Nothing for one that
 * needs a single operator: its decider is the "Decided by" of the row.
 */
export const ApprovalProgress: FC<{
  approval: Pick<ApprovalSummary, "approvals_required" | "approvers">;
}> = ({ approval }) =>
  approval.approvals_required > 1 ? (
    <p class="meta progress">
      <strong>{approvalProgress(approval.approvers, approval.approvals_required)}</strong> approvals
      {approval.approvers.length > 0
        ? `: ${approval.approvers.map((approver) => approver.name ?? approver.operator).join(", ")}`
        : null}
    </p>
  ) : null;
