import type { ApprovalSummary } from "../approvals/model";
import type { ApprovalDuplicate } from "../wire/approval";

/** How far back an identical call counts as a duplicate: as long as runs keep their ledgers. */
export const DUPLICATE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The states in which another approval of the same call may still, or already did, take effect. */
const LIVE_STATES = ["pending", "approved", "executed"] as const;

export type { ApprovalDuplicate } from "../wire/approval";

interface DirectoryRow extends Record<string, SqlStorageValue> {
  summary: string;
}

/**
 * The approvals of other runs of the tenant for the same destructive call (same tool and canonical
 * arguments, so the same `args_digest`) that are pending or went ahead within the window: approving
 * this one too would do the thing again. Reads the tenant directory's `approvals` table.
 */
export function findDuplicates(
  sql: SqlStorage,
  self: Pick<ApprovalSummary, "tool" | "args_digest" | "run_id" | "side_effect">,
  now: number,
): ApprovalDuplicate[] {
  if (self.side_effect !== "destructive" || !self.args_digest) return [];
  const since = new Date(now - DUPLICATE_WINDOW_MS).toISOString();
  const nowIso = new Date(now).toISOString();
  return (
    sql
      .exec<DirectoryRow>(
        `SELECT summary FROM approvals
       WHERE tool = ? AND args_digest = ? AND run_id != ? AND created_at >= ?
         AND state IN (${LIVE_STATES.map(() => "?").join(", ")})
       ORDER BY created_at DESC LIMIT 20`,
        self.tool,
        self.args_digest,
        self.run_id,
        since,
        ...LIVE_STATES,
      )
      .toArray()
      .map((row) => JSON.parse(row.summary) as ApprovalSummary)
      // A pending one past its expiry can no longer execute: not a duplicate any more.
      .filter((other) => other.state !== "pending" || other.expires_at > nowIso)
      .map((other) => ({
        approval_id: other.id,
        run_id: other.run_id,
        state: other.state,
        created_at: other.created_at,
        decided_by: other.decided_by,
        decided_by_name: other.decided_by_name ?? null,
      }))
  );
}
