import type { ApprovalRecord } from "../approvals/model";
import { failure } from "../wire/envelope";
import { context } from "./answers";
import type { CallRecord, RunMeta, TraceCompletion } from "./run-state";
import { type PolicyNow, sweepApprovals, type Write } from "./writes";

/** The admission machine's events of the run itself, which no call brings, and when they come. */

/** Keys, results, approvals and trace outlive the run by at least this long. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;

/** When the run's data may be deleted: its retention, counted from its end (or its deadline). */
export function retainUntil(run: RunMeta): number {
  return (run.ended_at ?? run.deadline_at) + RETENTION_MS;
}

/**
 * How long after a send begins the alarm rings to look for it: past any tool's timeout and its
 * postcondition read, so a send still running in a live instance has ended by then. A restart
 * mid-send loses the instance, not the alarm, which then finds the send cut off.
 */
export const RECONCILE_AFTER_MS = 30_000;

/**
 * When the ledger's alarm must ring: the first pending approval's expiry or SLA (to announce it
 * overdue), a look for sends cut off while any is in flight, or the run's deletion, whichever
 * comes first.
 */
export function nextAlarmAt(
  run: RunMeta,
  nextExpiry: number | null,
  reconcileAt: number | null = null,
  nextEscalation: number | null = null,
): number {
  return Math.min(
    retainUntil(run),
    nextExpiry ?? Number.POSITIVE_INFINITY,
    reconcileAt ?? Number.POSITIVE_INFINITY,
    nextEscalation ?? Number.POSITIVE_INFINITY,
  );
}

/** Event "the run is ended": it closes, and every pending approval expires because of it. */
export function endRun(run: RunMeta, pending: readonly ApprovalRecord[], now: number): Write[] {
  if (run.state === "closed") return [];
  return [{ kind: "close_run", at: now }, ...sweepApprovals({ ...run, state: "closed" }, pending, now, null)];
}

/**
 * Event "the ledger's alarm rings": time has passed (an approval's window or SLA, the run's
 * deadline) or the policy changed. Every pending approval that can no longer execute expires,
 * saying why; every other one past its SLA and not yet announced is escalated, once.
 */
export function alarmRings(
  run: RunMeta,
  pending: readonly ApprovalRecord[],
  now: number,
  policy: PolicyNow,
  escalationRole: string | null = null,
): Write[] {
  const expiring = sweepApprovals(run, pending, now, policy);
  const expired = new Set(expiring.map((write) => (write.kind === "approval_state" ? write.id : "")));
  const escalations: Write[] = pending
    .filter(
      (approval) =>
        !expired.has(approval.id) &&
        approval.escalated_at === null &&
        approval.sla_due_at !== null &&
        Date.parse(approval.sla_due_at) <= now,
    )
    .map((approval) => ({
      kind: "approval_escalate",
      id: approval.id,
      at: now,
      escalation_role: escalationRole,
    }));
  return [...expiring, ...escalations];
}

/** A trace entry opened and never closed, as the alarm finds it. */
export interface OpenEntry {
  call_id: string;
  tool: string | null;
  idempotency_key: string | null;
}

/** What the alarm reads to find calls a restart cut off. */
export interface InterruptedView {
  run: RunMeta;
  /** Trace entries still open. */
  open: readonly OpenEntry[];
  /** Keys whose request was leaving ("sending"). */
  sending: readonly CallRecord[];
  /** Keys whose request is on its way from this instance right now. */
  inflight: ReadonlySet<string>;
  /** The approvals of the sending keys that have one, by key: an approved one's call is in doubt now. */
  approvals?: ReadonlyMap<string, Pick<ApprovalRecord, "id" | "state" | "execution">>;
}

/**
 * Event "the alarm finds calls no longer running". A send cut off by a restart left its key
 * "sending" and its trace entry open; no instance will ever settle them. Each such key moves to in
 * doubt, keeping an answer that says its effect is unknown (so a later "not done" cannot stand, see
 * `certainty.ts`), and each open entry closes as interrupted: the trace never shows a call pending
 * that nothing runs. What this instance is still sending is left alone. Reads are never open (their
 * entry is written whole with their outcome), so an open entry without a key was cut off too.
 */
export function reconcileInterrupted(
  view: InterruptedView,
  now: number,
  /** What calling again with the same arguments does for this tool (`in-doubt.ts`'s sentence). */
  callAgain: (tool: string) => string,
): Write[] {
  const running = (key: string | null) => key !== null && view.inflight.has(key);
  const writes: Write[] = [];
  const openByKey = new Map(view.open.map((entry) => [entry.idempotency_key, entry]));
  for (const record of view.sending) {
    if (running(record.key)) continue;
    const callId = openByKey.get(record.key)?.call_id ?? "interrupted";
    const envelope = failure(
      context(view.run, callId, record.tool, record.key, view.run.counters, now),
      interruptedSpec(record.side_effect === "read", callAgain(record.tool)),
    );
    writes.push({ kind: "key_settle", key: record.key, state: "in_doubt", envelope, now, reconciled: true });
    const approval = view.approvals?.get(record.key);
    if (approval?.state === "approved" && approval.execution !== "in_doubt") {
      writes.push({ kind: "approval_in_doubt", id: approval.id });
    }
  }
  for (const entry of view.open) {
    if (running(entry.idempotency_key)) continue;
    writes.push({ kind: "trace_close", call_id: entry.call_id, completion: interruptedCompletion(now) });
  }
  return writes;
}

function interruptedSpec(read: boolean, callAgain: string) {
  return {
    code: "internal_error" as const,
    message: read
      ? "The proxy restarted while this call was running. Retrying is safe."
      : `The proxy restarted while this call was being sent; it may or may not have acted. ${callAgain}`,
    side_effect_confirmed: read ? false : null,
  };
}

function interruptedCompletion(now: number): TraceCompletion {
  return {
    ended_at: now,
    outcome: "retryable_failure",
    error_code: "internal_error",
    upstream_status: null,
    replayed: false,
    attempts: [],
  };
}
