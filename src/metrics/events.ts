import { type ApprovalState, assertNever, type Envelope, type ErrorCode } from "../wire/envelope";

/**
 * What the health of a tenant's agents is counted in. A call's envelope and an approval's change of
 * state each become one event; every sink stores the same counters, in this order (Analytics
 * Engine's `double1..double20`, its limit, the local store's columns), so they are read back the same way.
 */
export const COUNTERS = [
  "calls",
  "succeeded",
  "retryable",
  "terminal",
  "invalid",
  "loops",
  "escalations",
  "approvals_asked",
  "approved",
  "rejected",
  "expired",
  "approval_wait_ms_total",
  "approvals_decided",
  "replays",
  "duplicates_prevented",
  /** Calls refused because a remote tool's definition no longer matched its pin (drift). */
  "drifted",
  /** Approvals still undecided past their SLA: counted once each, when the escalation role is told. */
  "approvals_overdue",
  /**
   * Calls of a keyed tool (draft, write, destructive) that the run's ledger answered with a valid
   * key, polls of a pending approval excluded: the whole of the four high-risk rates.
   */
  "high_risk_calls",
  /** High-risk calls sent upstream while their policy required an approval that was not granted. */
  "approval_bypasses",
  /**
   * Keys used for different bytes: a call whose key matched a stored key holding another request,
   * or an upstream's `idempotency_key_reused` refusal.
   */
  "idempotency_conflicts",
] as const;
export type Counter = (typeof COUNTERS)[number];
export type Counts = Record<Counter, number>;

export const EVENT_KINDS = ["call", "approval"] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** The tool name recorded for a call that named no tool of its namespace: agents' typos are not labels. */
export const UNKNOWN_TOOL = "(unknown)";

/** One counted thing that happened to a tenant's agents. */
export interface MetricEvent {
  tenant: string;
  namespace: string;
  tool: string;
  kind: EventKind;
  /** A call's error code (`success` when it has none); the state an approval reached. */
  label: ErrorCode | ApprovalState | "success";
  /** Epoch milliseconds. */
  at: number;
  counts: Counts;
}

/** Every counter at zero, frozen: copied (`{ ...ZERO_COUNTS }`) rather than rebuilt for each event. */
const ZERO_COUNTS: Readonly<Counts> = Object.freeze(
  Object.fromEntries(COUNTERS.map((counter) => [counter, 0])) as Counts,
);

export function zeroCounts(): Counts {
  return { ...ZERO_COUNTS };
}

export function addCounts(into: Counts, from: Counts): Counts {
  for (const counter of COUNTERS) into[counter] += from[counter];
  return into;
}

/**
 * Whether a refusal says the agent's call itself was wrong: arguments that fail the schema, or a
 * call the tenant's policy (or the upstream) does not permit. Everything else is the world's answer.
 */
export function isInvalidCall(code: ErrorCode): boolean {
  switch (code) {
    case "validation_error":
    case "permission_error":
      return true;
    case "not_found":
    case "transient_error":
    case "timeout":
    case "rate_limited":
    case "conflict_error":
    case "partial_success":
    case "silent_failure":
    case "terminal_error":
    case "upstream_changed":
    case "upstream_too_large":
    case "budget_exhausted":
    case "repeat_detected":
    case "approval_required":
    case "approval_rejected":
    case "approval_expired":
    case "run_closed":
    case "configuration_error":
    case "tool_changed":
    case "tool_retired":
    case "internal_error":
      return false;
    default:
      return assertNever(code);
  }
}

/**
 * What one answered call counts as. A replay (or an identical call joined to one in flight) of a
 * keyed call, a write, draft or destructive one, is a duplicate effect prevented unless the stored
 * answer says no effect was ever done (a rejected approval has nothing to duplicate).
 */
export function countCall(envelope: Envelope): Counts {
  const counts = zeroCounts();
  const code = envelope.error?.code ?? null;
  counts.calls = 1;
  counts.succeeded = envelope.outcome === "success" ? 1 : 0;
  counts.retryable = envelope.outcome === "retryable_failure" ? 1 : 0;
  counts.terminal = envelope.outcome === "terminal_failure" ? 1 : 0;
  counts.invalid = code !== null && isInvalidCall(code) ? 1 : 0;
  counts.loops = code === "repeat_detected" ? 1 : 0;
  counts.drifted = code === "upstream_changed" && !envelope.replayed ? 1 : 0;
  counts.escalations = envelope.approval?.state === "pending" ? 1 : 0;
  counts.replays = envelope.replayed ? 1 : 0;
  const keyed = envelope.idempotency_key !== null;
  const noEffect = envelope.error?.side_effect_confirmed === false;
  counts.duplicates_prevented = envelope.replayed && keyed && !noEffect ? 1 : 0;
  // The upstream saw the key before with other bytes: a conflict the upstream caught.
  counts.idempotency_conflicts =
    !envelope.replayed && envelope.error?.details?.upstream_code === IDEMPOTENCY_KEY_REUSED ? 1 : 0;
  return counts;
}

/**
 * The calls a success rate is a share of: every call but those answered with an approval pending
 * (`escalations`: the call waits for a human, which is the gate working, neither success nor failure).
 */
export function callsAnswered(counts: Pick<Counts, "calls" | "escalations">): number {
  return Math.max(0, counts.calls - counts.escalations);
}

/** The upstream's refusal of a key it saw with another request (the IETF idempotency draft's 422). */
export const IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused";

/** What the run's ledger knows of one high-risk call once the admission machine decided it. */
export interface HighRiskFacts {
  /** An identical call asking again about its pending approval: counted as nothing here. */
  poll: boolean;
  /** The call's key was stored before, holding a request of other bytes (method, target, body). */
  storedBytesDiffer: boolean;
  /**
   * The call goes upstream (a write or destructive tool) although its policy requires an approval
   * and none was granted for its key. The admission machine never does this; it is measured anyway.
   */
  sentWithoutRequiredApproval: boolean;
}

/** What one high-risk call counts as in the ledger's own event, or null for a poll. */
export function countHighRisk(facts: HighRiskFacts): Counts | null {
  if (facts.poll) return null;
  return {
    ...zeroCounts(),
    high_risk_calls: 1,
    approval_bypasses: facts.sentWithoutRequiredApproval ? 1 : 0,
    idempotency_conflicts: facts.storedBytesDiffer ? 1 : 0,
  };
}

/** The approval states in which a human said yes: `executed` follows `approved`, and counts once. */
const APPROVED: ReadonlySet<ApprovalState> = new Set(["approved", "executed"]);

/**
 * What one approval's change of state counts as, or null when it counts nothing (the same state
 * written again, `approved` becoming `executed`). An approval first seen in any state was asked.
 * The wait is counted for human decisions only: an expiry measures the window, not a person.
 */
/** What an approval going past its SLA counts as: one overdue approval. */
export function countApprovalOverdue(): Counts {
  return { ...zeroCounts(), approvals_overdue: 1 };
}

export function countApprovalChange(
  previous: ApprovalState | null,
  next: ApprovalState,
  waitedMs: number,
): Counts | null {
  const counts = zeroCounts();
  if (previous === null) counts.approvals_asked = 1;
  const sameDecision =
    previous === next || (previous !== null && APPROVED.has(previous) && APPROVED.has(next));
  if (!sameDecision) {
    switch (next) {
      case "pending":
        break;
      case "approved":
      case "executed":
        counts.approved = 1;
        break;
      case "rejected":
        counts.rejected = 1;
        break;
      case "expired":
        counts.expired = 1;
        break;
      default:
        return assertNever(next);
    }
  }
  if (counts.approved + counts.rejected > 0) {
    counts.approvals_decided = 1;
    counts.approval_wait_ms_total = Math.max(0, Math.round(waitedMs));
  }
  return COUNTERS.some((counter) => counts[counter] > 0) ? counts : null;
}
