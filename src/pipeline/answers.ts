import { APPROVAL_POLL_MS, type ApprovalRecord } from "../approvals/model";
import type { EnvelopeContext, FailureSpec } from "../wire/envelope";
import { budgetLeft, type Counters } from "./budget";
import type { CallRecord, RunMeta } from "./run-state";
import { externalId } from "./shape";

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

/**
 * What is known of the effect of a key when a call under it is refused: nothing happened (no record,
 * or it waits for a human), unknown (sent, fate unclear), or what the stored outcome says. A refusal
 * never claims "no effect" for a key whose effect happened.
 */
export function knownEffect(
  record: CallRecord | null,
): Pick<FailureSpec, "side_effect_confirmed" | "external_id"> & { observed: Record<string, unknown> | null } {
  if (!record || record.state === "held") return { side_effect_confirmed: false, observed: null };
  if (record.state !== "completed" || !record.envelope)
    return { side_effect_confirmed: null, observed: null };
  const stored = record.envelope;
  const confirmed = stored.outcome === "success" ? true : (stored.error?.side_effect_confirmed ?? null);
  return {
    side_effect_confirmed: confirmed,
    external_id: stored.error?.external_id ?? externalId(stored.data),
    observed: {
      stored_outcome: {
        call_id: stored.call_id,
        outcome: stored.outcome,
        data: stored.data,
        error_code: stored.error?.code ?? null,
      },
    },
  };
}

export function waitSpec(approval: ApprovalRecord, tool: string): FailureSpec {
  return {
    code: "approval_required",
    message: `A human must approve this ${tool} call (${approval.reasons.join("; ")}). Wait, then make the identical call again to get its result.`,
    retry_after_ms: APPROVAL_POLL_MS,
    details: {
      approval_id: approval.id,
      ...(approval.earlier_effects.length > 0 ? { earlier_effects: approval.earlier_effects } : {}),
      ...(approval.limit ? { limit: approval.limit } : {}),
    },
  };
}

export function rejectedSpec(approval: Pick<ApprovalRecord, "id" | "decision_reason">): FailureSpec {
  return {
    code: "approval_rejected",
    message: `An operator rejected this call${approval.decision_reason ? `: ${approval.decision_reason}` : "."} Do not retry it.`,
    details: { approval_id: approval.id, reason: approval.decision_reason },
  };
}

export function expiredSpec(approval: Pick<ApprovalRecord, "id" | "decision_reason">): FailureSpec {
  const why = approval.decision_reason ?? "nobody decided in time";
  return {
    code: "approval_expired",
    message: `This call's approval can no longer be granted (${why}); it will not run. Ask a human how to proceed.`,
    details: { approval_id: approval.id, reason: why },
  };
}
