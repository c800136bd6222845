import { type Approver, approvalProgress, holdsRole, samePerson } from "../approvals/approvers";
import type { ApprovalRecord } from "../approvals/model";
import type { ToolSpec } from "../catalog/define-tool";
import { spendEffect } from "./budget";
import type { CallRecord, RunMeta, StoredRequest } from "./run-state";
import { type ApprovalDecisionRecord, expireWrite, sendKey, type Write, whyCannotExecute } from "./writes";

/**
 * The admission machine's event "an operator decides". Only an operator holding one of the
 * approval's roles decides (anyone else is refused, naming them). Deciding a decided approval the
 * same way again changes nothing; the other way is a conflict. Approving spends the run's effect
 * budget now (the cap counts executions) and sends the key's stored request: the same bytes the
 * agent's call would send. An approval that needs two approvers records the first approval and
 * stays pending ("1 of 2"); only a second one, from another person, executes it. One rejection by
 * anyone holding the role ends it.
 */

export interface Decision {
  decision: "approve" | "reject";
  operator: string;
  /** The operator's display name from OPERATOR_KEYS, recorded with the decision and the execution. */
  operator_name: string | null;
  /** The roles the operator's key holds in OPERATOR_KEYS. */
  operator_roles: readonly string[];
  reason: string | null;
  call_id: string;
  now: number;
  policy_version: string;
}

/** What the ledger read for a decision, in the same synchronous turn that applies the writes. */
export interface DecisionView {
  run: RunMeta;
  approval: ApprovalRecord | null;
  /** The call record of the approval's key. */
  record: CallRecord | null;
  /** The approval's tool, if the catalog still has it. */
  tool: ToolSpec | undefined;
  /** The run's pending approvals: an approval's execution may spend the budget others need. */
  pending: readonly ApprovalRecord[];
}

export type Refusal =
  | { code: "not_found" | "conflict_error"; message: string }
  /** The operator holds none of the roles whose decision counts: `roles` names them. */
  | { code: "permission_error"; message: string; roles: string[] };

export type DecideStep =
  | { kind: "done"; writes: Write[]; refusal: Refusal | null }
  | {
      kind: "send";
      writes: Write[];
      key: string;
      request: StoredRequest;
      tool: ToolSpec;
      /** The approved arguments, as the approval keeps them. */
      args: Record<string, unknown>;
    };

export function decideApproval(view: DecisionView, decision: Decision): DecideStep {
  const { run, approval, record, tool } = view;
  if (!approval) return refused({ code: "not_found", message: "No such approval." });
  if (!holdsRole(approval.approver_roles, decision.operator_roles)) {
    return refused(roleRefusal(approval.approver_roles, decision.operator_roles));
  }
  if (approval.state !== "pending") return decideAgain(approval, decision);
  const why = whyCannotExecute(run, run.counters, approval, decision.now, decision.policy_version);
  if (why) {
    return refused({ code: "conflict_error", message: `This approval can no longer be granted: ${why}.` }, [
      expireWrite(approval.id, why, decision.now),
    ]);
  }
  const decided: ApprovalDecisionRecord = {
    at: decision.now,
    by: decision.operator,
    by_name: decision.operator_name,
    reason: decision.reason,
  };
  if (decision.decision === "reject") {
    return {
      kind: "done",
      writes: [{ kind: "approval_state", id: approval.id, state: "rejected", decision: decided }],
      refusal: null,
    };
  }
  if (!tool) return refused({ code: "conflict_error", message: "The tool no longer exists." });
  if (!record) {
    return refused({
      code: "conflict_error",
      message: "This approval's request was not kept; ask the agent to make the call again.",
    });
  }
  const approver: Approver = {
    operator: decision.operator,
    name: decision.operator_name,
    at: new Date(decision.now).toISOString(),
  };
  const step = approve(view, approval, record, tool, decision, decided);
  if (approval.approvals_required === 1) return step;
  // More than one approver: each is recorded, and only the last one's approval executes.
  const earlier = approval.approvers.find((other) => samePerson(other, approver));
  if (earlier) return refused(approvedAlready(approval, earlier, approver));
  const vote: Write = { kind: "approval_approver", id: approval.id, approver };
  if (approval.approvers.length + 1 < approval.approvals_required) {
    return { kind: "done", writes: [vote], refusal: null };
  }
  return { ...step, writes: [vote, ...step.writes] };
}

function roleRefusal(roles: readonly string[], held: readonly string[]): Refusal {
  const named = roles.map((role) => `"${role}"`).join(" or ");
  return {
    code: "permission_error",
    message: `Only an operator holding the role ${named} may decide this approval; your key holds ${
      held.length > 0 ? held.map((role) => `"${role}"`).join(", ") : "no role"
    }.`,
    roles: [...roles],
  };
}

/** One person approving twice (the same id, or another key under the same name) counts once: refused. */
function approvedAlready(approval: ApprovalRecord, earlier: Approver, now: Approver): Refusal {
  const who =
    earlier.operator === now.operator
      ? "You already approved this"
      : `${earlier.name ?? earlier.operator} already approved this with another key`;
  const roles =
    approval.approver_roles.length > 0
      ? ` holding ${approval.approver_roles.map((role) => `"${role}"`).join(" or ")}`
      : "";
  return {
    code: "conflict_error",
    message: `${who} (${approvalProgress(approval.approvers, approval.approvals_required)}): it needs a second, different operator${roles}.`,
  };
}

/** A decision on an approval that is no longer pending: the same one again is a no-op. */
function decideAgain(approval: ApprovalRecord, decision: Decision): DecideStep {
  const same = decision.decision === "approve" ? ["approved", "executed"] : ["rejected"];
  if (same.includes(approval.state)) return { kind: "done", writes: [], refusal: null };
  const why =
    approval.decision_reason && approval.state === "expired" ? ` (${approval.decision_reason})` : "";
  return refused({ code: "conflict_error", message: `This approval is already ${approval.state}${why}.` });
}

function approve(
  view: DecisionView,
  approval: ApprovalRecord,
  record: CallRecord,
  tool: ToolSpec,
  decision: Decision,
  decided: ApprovalDecisionRecord,
): DecideStep {
  const { run } = view;
  // The approval itself is pending until these writes apply; it is the one being executed.
  const others = view.pending.filter((other) => other.id !== approval.id);
  return {
    kind: "send",
    key: record.key,
    request: record.request,
    tool,
    args: approval.args,
    writes: [
      { kind: "approval_state", id: approval.id, state: "approved", decision: decided },
      {
        kind: "trace_open",
        entry: {
          call_id: decision.call_id,
          actor: decision.operator,
          actor_name: decision.operator_name,
          started_at: decision.now,
          tool: tool.name,
          side_effect: tool.side_effect,
          args: approval.args,
          call_digest: approval.args_digest,
          idempotency_key: record.key,
          catalog_version: run.catalog_version,
        },
      },
      ...sendKey(
        run,
        record,
        spendEffect(tool.side_effect, run.counters),
        others,
        decision.now,
        decision.policy_version,
      ),
    ],
  };
}

function refused(refusal: Refusal, writes: Write[] = []): DecideStep {
  return { kind: "done", writes, refusal };
}

/** What an agent's withdrawal of its approval request expires it with, so its result can say so. */
export const WITHDRAWN_PREFIX = "withdrawn by the agent";

/**
 * The admission machine's event "the agent withdraws its request" (an MCP client cancels the task
 * that waits for it): a pending approval expires, saying why, so no decision can execute it later.
 * One already decided is left as it is; the caller reads its state.
 */
export function withdrawApproval(
  approval: ApprovalRecord | null,
  reason: string | null,
  now: number,
): Write[] {
  if (approval?.state !== "pending") return [];
  return [expireWrite(approval.id, reason ? `${WITHDRAWN_PREFIX}: ${reason}` : WITHDRAWN_PREFIX, now)];
}
