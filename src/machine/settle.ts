import { executionOf } from "../approvals/execution";
import { type ApprovalRecord, approvalBlock } from "../approvals/model";
import type { Envelope } from "../wire/envelope";
import { budgetLeft } from "./budget";
import { keyHistory, settleCertainty } from "./certainty";
import { completionOf } from "./record";
import type { CallRecord, RunMeta, Taint, TraceCompletion } from "./run-state";
import { sweepApprovals, type Write } from "./writes";

/**
 * The admission machine's events after a send: the upstream answered (or the dispatch ended
 * without an answer), and an identical call that joined the send gets its copy.
 */

/** What the ledger read when a sent call's outcome is known, with the outcome itself. */
export interface Settlement {
  /** The run as the ledger holds it now: later calls may have spent more since this one was admitted. */
  run: RunMeta;
  call_id: string;
  key: string | null;
  /** The key's record as the send left it (this send counted), with the answer it kept while in doubt. */
  record: CallRecord | null;
  /** The key's approval as it is now, if it has one. */
  approval: ApprovalRecord | null;
  /** The run's pending approvals, read for a keyed send only (a read spends no effect budget). */
  pending: readonly ApprovalRecord[];
  /** A read's admission, held in memory until now: it commits with the read's outcome. */
  admission: readonly Write[] | null;
  envelope: Envelope;
  completion: TraceCompletion;
  /** Set when this call brought third-party text into the run. */
  taint: Taint | null;
  now: number;
  /** What calling again does for the call's tool, when its answer ends in doubt (`in-doubt.ts`). */
  call_again?: string;
}

/**
 * Event "the send settled". The answer is folded with the key's history (`certainty.ts`): a key
 * completes on a certain answer, anything unknown leaves it in doubt (keeping that answer), so
 * the next identical call resends the stored bytes. An approved key is executed once its outcome
 * is known, whoever sent it, and its approval records what the call did (`approvals/execution.ts`);
 * one left in doubt stays approved, recorded as in doubt. A keyed send ends with a sweep: time passed while it was out, and
 * what the run has spent may leave other pending approvals unable to execute. Returns the writes
 * and the answer to give, which is the folded one.
 */
export function settleSend(settlement: Settlement): { writes: Write[]; envelope: Envelope } {
  const { run, key, completion } = settlement;
  const writes: Write[] = [
    ...admissionNow(settlement),
    ...(settlement.taint ? [{ kind: "taint" as const, taint: settlement.taint }] : []),
  ];
  let { envelope } = settlement;
  if (key !== null) {
    const settled = settleCertainty(keyHistory(settlement.record), envelope, settlement.call_again);
    const { approval } = settlement;
    envelope =
      approval?.state === "approved"
        ? withExecution(settled.envelope, approval, settled.state)
        : settled.envelope;
    writes.push({ kind: "key_settle", key, state: settled.state, envelope, now: completion.ended_at });
    if (approval?.state === "approved" && settled.state === "completed") {
      writes.push({
        kind: "approval_state",
        id: approval.id,
        state: "executed",
        decision: null,
        result: envelope,
        execution: executionOf(envelope),
      });
    } else if (approval?.state === "approved" && approval.execution !== "in_doubt") {
      writes.push({ kind: "approval_in_doubt", id: approval.id });
    }
  }
  writes.push({ kind: "trace_close", call_id: settlement.call_id, completion });
  if (key !== null) writes.push(...sweepApprovals(run, settlement.pending, settlement.now, null));
  return { writes, envelope };
}

/**
 * The answer of an approved call, its approval block saying what the call did, as the approval
 * records it: executed once its outcome is known (whatever it was), still approved while in doubt.
 * The agent reads this block, so it must never say "executed" of a call the upstream refused.
 */
function withExecution(
  envelope: Envelope,
  approval: ApprovalRecord,
  key: "completed" | "in_doubt",
): Envelope {
  const block = envelope.approval ?? approvalBlock(approval);
  const state = key === "completed" ? "executed" : "approved";
  return { ...envelope, approval: { ...block, state, execution: executionOf(envelope, key) } };
}

/**
 * A read's admission as it commits: its trace entry, and the counters as the run has them now
 * rather than as they were when it was admitted, since later calls may have spent more meanwhile.
 */
function admissionNow({ admission, run }: Settlement): Write[] {
  if (!admission) return [];
  return [
    ...admission.filter((write) => write.kind !== "counters"),
    { kind: "counters", counters: run.counters },
  ];
}

/** Event "an identical call in flight answered": the joiner's copy of that envelope. */
export function joinedAnswer(
  run: RunMeta,
  envelope: Envelope,
  callId: string,
  now: number,
): { envelope: Envelope; writes: Write[] } {
  const out: Envelope = {
    ...envelope,
    call_id: callId,
    replayed: true,
    budget: budgetLeft(run.limits, run.counters, run.deadline_at, now),
  };
  return {
    envelope: out,
    writes: [{ kind: "trace_close", call_id: callId, completion: completionOf(out, now) }],
  };
}
