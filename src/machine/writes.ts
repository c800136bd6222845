import type { Approver } from "../approvals/approvers";
import type { ApprovalRecord, EditedApproval } from "../approvals/model";
import { type CurrentPolicy, policyChange } from "../approvals/policy-version";
import type { SideEffect } from "../catalog/define-tool";
import type { ClaimedValue } from "../effects/claim";
import type { ApprovalExecution, ApprovalState, Envelope } from "../wire/envelope";
import { type Counters, canSpendEffect } from "./budget";
import type { CallRecord, NewTraceEntry, RunMeta, StoredRequest, Taint, TraceCompletion } from "./run-state";
import type { ToolPins } from "./tool-pins";

/**
 * The admission machine's vocabulary: the writes every event returns, and the rules more than one
 * event applies (whether a pending approval can still execute, the sweep, what sending a key
 * writes). The events live beside it: `admit.ts` (an agent's call), `decide.ts` (an operator's
 * decision), `settle.ts` (a send's outcome) and `run-events.ts` (the run ends, the alarm rings).
 * Nothing here stores, sends or awaits: the Durable Object applies the writes in one
 * `transactionSync` and adds none of its own.
 *
 * A key's states and what moves it (E = the run refuses first: closed, past its deadline or out of
 * calls; a refusal for a key whose effect is known says so, see `knownEffect`). An outcome is
 * folded with the key's earlier sends first (`certainty.ts`): "not done" after a send that may have
 * acted is unknown. A "sending" key no instance is sending (a restart cut it off) is moved to
 * in_doubt by the alarm (`run-events.ts`), and the call's trace entry is closed as interrupted:
 *
 * | key state    | agent's identical call                         | operator approves     | operator rejects | upstream outcome                  | can no longer execute |
 * | ------------ | ---------------------------------------------- | --------------------- | ---------------- | --------------------------------- | --------------------- |
 * | (none)       | effect budget spent → budget_exhausted;        |                       |                  |                                   |                       |
 * |              | needs a human → held + approval pending, wait; |                       |                  |                                   |                       |
 * |              | else spend, → sending, send                    |                       |                  |                                   |                       |
 * | held/pending | wait (approval_required)                       | spend, → sending, send | rejected        |                                   | approval expired, with why |
 * | held/rejected| approval_rejected (terminal)                   | conflict              | unchanged        |                                   |                       |
 * | held/expired | approval_expired, naming why (terminal)        | conflict              | conflict         |                                   |                       |
 * | sending      | in flight: join it; after a restart: resend    | unchanged             | conflict         | unknown → in_doubt, certain → completed |                 |
 * | in_doubt     | resend the stored bytes (no budget spent)      | unchanged             | conflict         | unknown → in_doubt, certain → completed |                 |
 * | completed    | replay the stored envelope                     | unchanged             | conflict         |                                   |                       |
 */

/** What the ledger commits for one event, in order, in one transaction. */
export type Write =
  | { kind: "counters"; counters: Counters }
  | { kind: "close_run"; at: number }
  | { kind: "taint"; taint: Taint }
  /** Tools the run now knows at these versions (`tool-pins.ts`), merged into its pins. */
  | { kind: "tool_pins"; pins: ToolPins }
  | { kind: "trace_open"; entry: NewTraceEntry }
  | { kind: "trace_close"; call_id: string; completion: TraceCompletion }
  | { kind: "key_hold"; record: CallRecord; now: number }
  /** A held key an operator's edit replaced by the edited call's key: it never left, and never will. */
  | { kind: "key_drop"; key: string }
  | {
      kind: "key_send";
      key: string;
      tool: string;
      side_effect: SideEffect;
      request: StoredRequest;
      now: number;
    }
  | {
      kind: "key_settle";
      key: string;
      state: "in_doubt" | "completed";
      envelope: Envelope | null;
      now: number;
      /** Set by the alarm's reconciliation of a send a restart cut off (the audit log says so). */
      reconciled?: true;
    }
  | { kind: "approval_open"; approval: ApprovalRecord }
  /**
   * A new effect's claim on the tenant's shared state, committed with its key: the shards that hold
   * it hear of the key's fate from then on (through the outbox, in the commits that change it).
   */
  | {
      kind: "effect_claim";
      key: string;
      shards: number[];
      value: ClaimedValue | null;
      over_cap: boolean;
    }
  /**
   * A pending approval is past its SLA: it is recorded as announced, and its `approval.overdue`
   * webhook, naming the tenant's escalation role, is written to the outbox in the same transaction,
   * so it goes out once and is retried until delivered.
   */
  | { kind: "approval_escalate"; id: string; at: number; escalation_role: string | null }
  /** An operator's edit: the approval binds the edited call from now on (see `decide.ts`). */
  | ({ kind: "approval_edit"; id: string; edited: EditedApproval } & DecisionSeen)
  /** One operator's approval of an approval that needs more than one, recorded before it executes. */
  | ({ kind: "approval_approver"; id: string; approver: Approver } & DecisionSeen)
  | {
      kind: "approval_state";
      id: string;
      state: ApprovalState;
      decision: ApprovalDecisionRecord | null;
      result?: Envelope;
      /** What the approval's call did, once its outcome is known (src/approvals/execution.ts). */
      execution?: ApprovalExecution;
    }
  /**
   * An approved call's send ended in doubt: the approval stays approved (the agent's identical call
   * resends it), and says so. Its state did not change: nothing is announced.
   */
  | { kind: "approval_in_doubt"; id: string };

/** Who decided an approval and why, as recorded; `by` is null when the proxy expired it itself. */
export interface ApprovalDecisionRecord extends DecisionSeen {
  at: number;
  by: string | null;
  by_name: string | null;
  reason: string | null;
}

/**
 * What a deciding operator said they saw and confirmed, for the audit log only (never stored with
 * the approval): the digest of the decision context their page showed, and that they approve a
 * repeat of another run's effect (`confirm_duplicate`).
 */
export interface DecisionSeen {
  context_digest?: string | null;
  duplicate_confirmed?: true;
}

/** Why an approval expired when nobody decided it within its window: it expired undecided. */
export const UNDECIDED = "nobody decided within the approval window";

/**
 * The policy pending approvals are judged under now (`approvals/policy-version.ts`): by tool name,
 * each tool's current policy (null: the tool is no longer the run's), a tool not named being left
 * unjudged; or one version every approval is held to; or null, judging none.
 */
export type PolicyNow = string | ReadonlyMap<string, CurrentPolicy | null> | null;

/** Why an approval's policy no longer holds, or null when it does (or is not judged here). */
function policyMoved(
  approval: Pick<ApprovalRecord, "tool" | "policy_version" | "policy_binding">,
  policy: PolicyNow,
): string | null {
  if (policy === null) return null;
  if (typeof policy === "string") {
    return approval.policy_version === policy ? null : "the policy changed since it was requested";
  }
  if (!policy.has(approval.tool)) return null;
  const current = policy.get(approval.tool) ?? null;
  if (current?.version === approval.policy_version) return null;
  return policyChange(approval.tool, approval.policy_binding ?? null, current);
}

/**
 * Why a pending approval can no longer execute, or null when it still can: the one rule behind
 * "no dead ends", used when an agent asks again, when an operator decides and by the sweep.
 */
export function whyCannotExecute(
  run: RunMeta,
  counters: Counters,
  approval: Pick<ApprovalRecord, "side_effect" | "expires_at" | "tool" | "policy_version" | "policy_binding">,
  now: number,
  policy: PolicyNow,
): string | null {
  if (run.state === "closed") return "the run was ended";
  if (now >= run.deadline_at) return "the run passed its deadline";
  if (Date.parse(approval.expires_at) <= now) return UNDECIDED;
  const moved = policyMoved(approval, policy);
  if (moved !== null) return moved;
  const effect = canSpendEffect(approval.side_effect, run.limits, counters);
  if (!effect.ok) return `the run's ${effect.limit} budget is spent`;
  return null;
}

export function expireWrite(id: string, why: string, now: number): Write {
  return {
    kind: "approval_state",
    id,
    state: "expired",
    decision: { at: now, by: null, by_name: null, reason: why },
  };
}

/**
 * Every pending approval that can no longer execute expires, each saying why. A policy of null
 * leaves the policy unjudged (only the events that know the current one pass it).
 */
export function sweepApprovals(
  run: RunMeta,
  pending: readonly ApprovalRecord[],
  now: number,
  policy: PolicyNow,
): Write[] {
  const writes: Write[] = [];
  for (const approval of pending) {
    if (approval.state !== "pending") continue;
    const why = whyCannotExecute(run, run.counters, approval, now, policy);
    if (why) writes.push(expireWrite(approval.id, why, now));
  }
  return writes;
}

/** A key whose stored request is about to leave. */
export type KeyToSend = Pick<CallRecord, "key" | "tool" | "side_effect" | "request">;

/**
 * A key's request leaves now, with the run's counters as they are once it is paid for (a first
 * send spends the budget of its side effect; a resend spends nothing). This is the one home of the
 * rule "a spend expires the pending approvals that needed it": they expire in these same writes,
 * before the request leaves, because a restart mid-request would never reach the outcome that
 * could expire them later. An agent's send and an operator's approval both send through here.
 */
export function sendKey(
  run: RunMeta,
  key: KeyToSend,
  counters: Counters,
  pending: readonly ApprovalRecord[],
  now: number,
  policy: PolicyNow,
): Write[] {
  return [
    { kind: "counters", counters },
    {
      kind: "key_send",
      key: key.key,
      tool: key.tool,
      side_effect: key.side_effect,
      request: key.request,
      now,
    },
    ...sweepApprovals({ ...run, counters }, pending, now, policy),
  ];
}
