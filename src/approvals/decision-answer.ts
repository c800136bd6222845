import type { ApprovalDecision } from "../wire/approval-answers";
import {
  type ApprovalExecution,
  type Envelope,
  type EnvelopeContext,
  type FailureSpec,
  failure,
  success,
} from "../wire/envelope";
import { didNotExecute } from "./execution";
import type { ApprovalRecord } from "./model";

/**
 * What an operator's decision answers: the decided approval in `data`, always, and an outcome that
 * says what its call did. A decision that sent nothing (a rejection, the first of two approvals) or
 * whose call executed is a success; an approval whose call the upstream refused, the proxy did not
 * send, or that ended in doubt is not, whatever the decision itself did: its error is the call's
 * (code, effect), told to the operator, so nobody reads "success" for a refund that never happened.
 */
export function decisionAnswer(
  ctx: EnvelopeContext,
  approval: ApprovalRecord,
  /** The answer of the call this decision sent, when it sent one: an approval in doubt keeps none. */
  call: Envelope | null = null,
): Envelope {
  const data: ApprovalDecision = { approval };
  if (!didNotExecute(approval)) return success(ctx, data);
  const execution = approval.execution as Exclude<ApprovalExecution, "executed">;
  const error = (approval.result ?? call)?.error ?? null;
  const spec: FailureSpec = {
    code: error?.code ?? (execution === "in_doubt" ? "transient_error" : "terminal_error"),
    message: `${LEAD[execution]}${error ? `: ${error.message}` : "."}${NEXT[execution]}`,
    side_effect_confirmed: execution === "in_doubt" ? null : false,
    external_id: error?.external_id ?? null,
    recommended_next_action: execution === "in_doubt" ? "reconcile" : "stop",
    details: { execution, approval_id: approval.id, call: error?.details ?? null },
    outcome:
      execution === "in_doubt" && call?.outcome === "retryable_failure"
        ? "retryable_failure"
        : "terminal_failure",
  };
  // Failures carry no data elsewhere; here the decision stands, and a client reads it as before.
  return { ...failure(ctx, spec), data };
}

const LEAD = {
  refused: "Approved, but the upstream refused the call; nothing was done",
  not_sent: "Approved, but the call was not sent; nothing was done",
  in_doubt: "Approved, but whether the call took effect is unknown",
} as const satisfies Record<Exclude<ApprovalExecution, "executed">, string>;

const NEXT = {
  refused: "",
  not_sent: "",
  in_doubt:
    " The agent's identical call sends it again under the same idempotency key, so it happens at most once; check with a read before acting on it.",
} as const satisfies Record<Exclude<ApprovalExecution, "executed">, string>;
