import type { ApprovalRecord } from "../approvals/model";
import type { RunMeta } from "./run-state";
import { sweepApprovals, type Write } from "./writes";

/** The admission machine's events of the run itself, which no call brings, and when they come. */

/** Keys, results, approvals and trace outlive the run by at least this long. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;

/** When the run's data may be deleted: its retention, counted from its end (or its deadline). */
export function retainUntil(run: RunMeta): number {
  return (run.ended_at ?? run.deadline_at) + RETENTION_MS;
}

/** When the ledger's alarm must ring: the first pending approval's expiry, or the run's deletion. */
export function nextAlarmAt(run: RunMeta, nextExpiry: number | null): number {
  const retention = retainUntil(run);
  return nextExpiry === null ? retention : Math.min(nextExpiry, retention);
}

/** Event "the run is ended": it closes, and every pending approval expires because of it. */
export function endRun(run: RunMeta, pending: readonly ApprovalRecord[], now: number): Write[] {
  if (run.state === "closed") return [];
  return [{ kind: "close_run", at: now }, ...sweepApprovals({ ...run, state: "closed" }, pending, now, null)];
}

/**
 * Event "the ledger's alarm rings": time has passed (an approval's window, the run's deadline) or
 * the policy changed, and every pending approval that can no longer execute expires, saying why.
 */
export function alarmRings(
  run: RunMeta,
  pending: readonly ApprovalRecord[],
  now: number,
  policyVersion: string,
): Write[] {
  return sweepApprovals(run, pending, now, policyVersion);
}
