import { APPROVAL_POLL_MS, type ApprovalRecord } from "../approvals/model";
import type { EnvelopeContext, FailureSpec } from "../wire/envelope";
import { budgetLeft, type Counters } from "./budget";
import type { RunMeta } from "./run-state";
import { UNDECIDED } from "./writes";

/**
 * What a call is told when it does not run now: the envelope's context, what is known of its key's
 * effect, and the failures of a call waiting for, refused by or too late for a human.
 */

export function context(
  run: RunMeta,
  callId: string,
  tool: string | null,
  key: string | null,
  counters: Counters,
  now: number,
  extra: Partial<EnvelopeContext> = {},
): EnvelopeContext {
  return {
    call_id: callId,
    environment: run.environment,
    tool,
    idempotency_key: key,
    budget: budgetLeft(run.limits, counters, run.deadline_at, now),
    ...extra,
  };
}

export function waitSpec(approval: ApprovalRecord, tool: string): FailureSpec {
  return {
    code: "approval_required",
    message: `A human must approve this ${tool} call (${approval.reasons.join("; ")}). Wait, then make the identical call again to get its result; asking sooner than retry_after_ms costs a call.`,
    retry_after_ms: APPROVAL_POLL_MS,
    details: {
      approval_id: approval.id,
      ...(approval.earlier_effects.length > 0 ? { earlier_effects: approval.earlier_effects } : {}),
      ...(approval.limit ? { limit: approval.limit } : {}),
    },
  };
}

/**
 * Why an approval ended without running, as a code beside the words: an operator's rejection, an
 * approval nobody decided within its window (it expired undecided), or one that could no longer
 * execute (the run ended, the policy changed, a budget was spent, the agent withdrew it).
 */
export type ApprovalEnd = "rejected" | "expired_undecided" | "expired_invalidated";

/** What the model is told to do next when an approval ended without running: never to retry. */
export const APPROVAL_END_NEXT: Record<ApprovalEnd, string> = {
  rejected:
    "Do not retry; tell the user an operator rejected this, give the operator's reason, and ask how they want to proceed.",
  expired_undecided:
    "Do not retry; tell the user nobody approved this in time, so it was not done, and ask how they want to proceed.",
  expired_invalidated:
    "Do not retry; tell the user it was not done and why, and ask how they want to proceed.",
};

export function rejectedSpec(approval: Pick<ApprovalRecord, "id" | "decision_reason">): FailureSpec {
  const reason = approval.decision_reason;
  return {
    code: "approval_rejected",
    message: `An operator rejected this call${reason ? `. Operator's reason: ${JSON.stringify(reason)}.` : "."} It was not executed. ${APPROVAL_END_NEXT.rejected}`,
    details: { approval_id: approval.id, reason, ended: "rejected" satisfies ApprovalEnd },
  };
}

/** How an expired approval ended: undecided (no reason recorded counts as undecided), or invalidated. */
export function expiryOf(approval: Pick<ApprovalRecord, "decision_reason">): ApprovalEnd {
  const why = approval.decision_reason;
  return why === null || why === UNDECIDED ? "expired_undecided" : "expired_invalidated";
}

export function expiredSpec(approval: Pick<ApprovalRecord, "id" | "decision_reason">): FailureSpec {
  const ended = expiryOf(approval);
  const why = approval.decision_reason ?? "nobody decided in time";
  const what =
    ended === "expired_undecided"
      ? `This call's approval expired undecided (${why}); it was not executed and will not run.`
      : `This call's approval can no longer be granted (${why}); it was not executed and will not run.`;
  return {
    code: "approval_expired",
    message: `${what} ${APPROVAL_END_NEXT[ended]}`,
    details: { approval_id: approval.id, reason: why, ended },
  };
}
