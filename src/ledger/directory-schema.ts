import { subjectsOf } from "../approvals/subjects";
import { callDigest } from "../core/idempotency-key";
import { applyMigrations } from "../core/sql-migrations";
import type { ApprovalSummary } from "../wire/approval";

/**
 * The ApprovalDirectory's SQLite schema, as ordered migrations (src/core/sql-migrations.ts).
 * Directories created before versions were recorded hold V1's table already: V1 only creates what
 * is missing, so they start from version 0 like a new one and go on to V2.
 */
const V1 = `
CREATE TABLE IF NOT EXISTS approvals (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  state TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  summary TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS approvals_by_state ON approvals (state, created_at);
`;

/**
 * History and search: approvals get the columns operators filter by, and runs get their own index.
 * Times are ISO 8601 text as `toISOString` writes it, so they compare as strings. `subjects` and
 * `tools` are JSON arrays of strings (src/approvals/subjects.ts). Rows written before this version
 * are filled in by `backfillApprovals`: an empty `args_digest` marks them.
 */
const V2 = `
ALTER TABLE approvals ADD COLUMN tool TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN args_digest TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN decided_at TEXT;
ALTER TABLE approvals ADD COLUMN subjects TEXT NOT NULL DEFAULT '[]';
CREATE INDEX IF NOT EXISTS approvals_by_created ON approvals (created_at, id);
CREATE INDEX IF NOT EXISTS approvals_by_tool_digest ON approvals (tool, args_digest);
CREATE INDEX IF NOT EXISTS approvals_to_backfill ON approvals (id) WHERE args_digest = '';
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL,
  state TEXT NOT NULL,
  created_at TEXT NOT NULL,
  deadline_at TEXT NOT NULL,
  ended_at TEXT,
  calls_used INTEGER NOT NULL DEFAULT 0,
  tools TEXT NOT NULL DEFAULT '[]',
  subjects TEXT NOT NULL DEFAULT '[]',
  last_activity_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at, run_id);
`;

export const DIRECTORY_MIGRATIONS: readonly string[] = [V1, V2];

export function migrateDirectory(sql: SqlStorage): void {
  applyMigrations(sql, DIRECTORY_MIGRATIONS);
}

/**
 * Fills the V2 columns of rows written before V2 from their JSON summary: the tool, the subjects of
 * the arguments, and the arguments' digest, which is the call digest of tool and arguments (what the
 * ledger records as `args_digest`). Rows the backfill reaches are no longer marked, so it resumes
 * where an interrupted one stopped; a partial index holds only the marked rows, so once none are left
the check on every start reads an empty index.
 */
export async function backfillApprovals(sql: SqlStorage): Promise<number> {
  const rows = sql
    .exec<{ id: string; summary: string }>("SELECT id, summary FROM approvals WHERE args_digest = ''")
    .toArray();
  for (const row of rows) {
    const summary = JSON.parse(row.summary) as Partial<ApprovalSummary> &
      Pick<ApprovalSummary, "tool" | "args">;
    sql.exec(
      "UPDATE approvals SET tool = ?, args_digest = ?, decided_at = ?, subjects = ? WHERE id = ?",
      summary.tool,
      summary.args_digest ?? (await callDigest(summary.tool, summary.args)),
      summary.decided_at ?? null,
      JSON.stringify(subjectsOf(summary.args)),
      row.id,
    );
  }
  return rows.length;
}
