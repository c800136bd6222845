import type { ApprovalRecord } from "../approvals/model";
import type { ToolSpec } from "../catalog/define-tool";
import { canonicalJson } from "../core/canonical-json";
import type { Refusal } from "./decide";
import { validateArguments } from "./validate";

/**
 * A decision that arrives after another. Operators may decide one approval at the same moment; the
 * run applies their decisions one after the other, each as it stood when it reached the run. A
 * decision that finds the approval changed by another is compared with what that one decided: the
 * same decision again (approve the same arguments, or reject a rejected one) changes nothing and is
 * answered as done; any other is refused as not applied, so no operator is told that their
 * decision went out when another one did. A two-person approval's step is compared through its
 * edit: an edit makes its operator the first approver of the edited call, so one made on arguments
 * another edit has since replaced is refused, even with the same arguments, rather than counted as
 * the second approval that executes it.
 */

/**
 * What an approval approves: for a plain approval, the approval's arguments when the decision
 * reached the run (what its operator decided on); for an edit, the operator's arguments as the
 * tool's schema reads them.
 */
export interface Approving {
  args: unknown;
  edited: boolean;
  /** Who had approved a two-person approval when the decision arrived: the step it was made at. */
  approvers: readonly string[];
}

/** What a decision approves, from the approval as it stood when the decision arrived; null for a rejection. */
export function approvingOf(
  decision: "approve" | "reject",
  seen: Pick<ApprovalRecord, "args" | "approvers"> | null,
  tool: ToolSpec | undefined,
  edited: unknown,
): Approving | null {
  if (decision === "reject" || !seen) return null;
  const approvers = seen.approvers.map((approver) => approver.operator);
  if (edited === null || edited === undefined) return { args: seen.args, edited: false, approvers };
  const valid = tool ? validateArguments(tool.input, edited) : null;
  return { args: valid?.ok ? valid.args : edited, edited: true, approvers };
}

/**
 * A decision on an approval no longer pending: the same one again is done (null); another is a
 * conflict that names what the approval is now.
 */
export function decidedAgain(
  approval: ApprovalRecord,
  decision: "approve" | "reject",
  approving: Approving | null | undefined,
): Refusal | null {
  const granted = approval.state === "approved" || approval.state === "executed";
  if (decision === "reject" ? approval.state === "rejected" : granted) {
    if (!granted || !approving || sameArguments(approving.args, approval.args)) return null;
    const yours = approving.edited ? "your edit's" : "the ones you approved (another operator edited them)";
    const what = approving.edited ? "your edit was" : "your approval was";
    return {
      code: "conflict_error",
      message: `This approval is already ${approval.state} with other arguments than ${yours}; ${what} not applied. Look at the approval to see what was approved.`,
    };
  }
  const why =
    approval.decision_reason && approval.state === "expired" ? ` (${approval.decision_reason})` : "";
  return {
    code: "conflict_error",
    message: `This approval is already ${approval.state}${why}.`,
  };
}

/**
 * A pending approval another operator changed after this decision reached the run. Approving
 * arguments another's edit replaced would execute arguments its operator did not decide on. An
 * edit restarts a two-person approval's approvals, so one made before another operator's approval
 * was recorded would discard an approval its operator never saw. An edit prepared on arguments
 * since replaced is refused by its own base (`EditPlan.based_on`).
 */
export function editedSince(
  approval: ApprovalRecord,
  approving: Approving | null | undefined,
  prepared: boolean,
): Refusal | null {
  if (!approving) return null;
  if (prepared) {
    const now = approval.approvers.map((approver) => approver.operator);
    if (canonicalJson(now) === canonicalJson(approving.approvers)) return null;
    return {
      code: "conflict_error",
      message: `Another operator approved this (${approval.approvers.length} of ${approval.approvals_required}) while you edited it; an edit starts its approvals again, so your edit was not applied. Look at the approval again.`,
    };
  }
  if (sameArguments(approving.args, approval.args)) return null;
  return {
    code: "conflict_error",
    message: `Another operator edited this approval's arguments after your ${approving.edited ? "edit" : "approval"} was made; it was not applied. Look at the approval to see what it binds now.`,
  };
}

function sameArguments(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
