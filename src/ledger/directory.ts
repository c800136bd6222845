import { DurableObject } from "cloudflare:workers";
import type { ApprovalFilters, RunFilters } from "../approvals/list-filters";
import { type ApprovalSummary, isOlderSummary, positionOf } from "../approvals/model";
import { cutPage } from "../approvals/page-cursor";
import { mergeSorted, subjectsOf } from "../approvals/subjects";
import type { Env } from "../env";
import { recordApprovalChange, recordApprovalOverdue } from "../metrics/record";
import type { ApprovalListItem } from "../wire/approval";
import type { ApprovalExecution, ApprovalState } from "../wire/envelope";
import type { RunIndexEntry, RunSummary } from "../wire/run-summary";
import {
  type ApprovalRow,
  approvalFromRow,
  approvalListQuery,
  type RunRow,
  runFromRow,
  runListQuery,
} from "./directory-queries";
import { backfillApprovals, migrateDirectory } from "./directory-schema";
import { type ApprovalDuplicate, findDuplicates } from "./duplicates";

export interface ApprovalPage {
  approvals: ApprovalListItem[];
  next_cursor: string | null;
}

export interface RunPage {
  runs: RunSummary[];
  next_cursor: string | null;
}

/**
 * One per tenant: the index operators list and search approvals and runs from, across every run of
 * the tenant. Each run's ledger stays the source of truth and writes through here (an approval
 * whenever it changes; a run when it opens, ends, or first names a tool or a subject), so a listing
 * never has to wake every run. The index is keyed by tenant, so an operator of one tenant cannot
 * list or find another tenant's approvals or runs.
 */
export class ApprovalDirectory extends DurableObject<Env> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    void ctx.blockConcurrencyWhile(async () => {
      migrateDirectory(this.#sql);
      await backfillApprovals(this.#sql);
    });
  }

  /**
   * Records an approval's latest state, written through by its run's ledger (`tenant` is this
   * directory's own). The ledger's outbox delivers at least once and retries, so the same summary may
   * come twice and an older one after a newer one: the same is a no-op, an older one is ignored, and
   * an approval's listed state only moves forward. Every change of state is applied here once, so
   * this is also where it is counted for the agents' health: asked, approved, rejected, expired, and
   * how long a human took.
   */
  upsert(summary: ApprovalSummary, tenant: string): void {
    // A copy stored before summaries listed their approvers records none.
    const held = this.#sql
      .exec<{
        state: ApprovalState;
        decided_at: string | null;
        escalated_at: string | null;
        approved: number;
        execution: ApprovalExecution | null;
      }>(
        `SELECT state, decided_at, json_extract(summary, '$.escalated_at') AS escalated_at,
           COALESCE(json_array_length(summary, '$.approvers'), 0) AS approved,
           json_extract(summary, '$.execution') AS execution FROM approvals WHERE id = ?`,
        summary.id,
      )
      .toArray()[0];
    if (held && isOlderSummary(positionOf(summary), held)) return;
    const previous = held?.state ?? null;
    this.#sql.exec(
      `INSERT INTO approvals (id, run_id, state, created_at, expires_at, summary, tool, args_digest, decided_at, subjects)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET state = excluded.state, summary = excluded.summary,
         decided_at = excluded.decided_at, tool = excluded.tool, args_digest = excluded.args_digest,
         subjects = excluded.subjects`,
      summary.id,
      summary.run_id,
      summary.state,
      summary.created_at,
      summary.expires_at,
      JSON.stringify(summary),
      summary.tool,
      summary.args_digest,
      summary.decided_at,
      JSON.stringify(subjectsOf(summary.args)),
    );
    if (previous !== summary.state)
      recordApprovalChange(this.env, previous, { ...summary, tenant }, this.ctx);
    // Escalated once per approval; a late or repeated copy of the summary counts nothing more.
    if (summary.escalated_at && !held?.escalated_at)
      recordApprovalOverdue(this.env, { tool: summary.tool, tenant }, this.ctx);
  }

  /** One page of approvals, newest first. A pending one past its expiry is listed as expired. */
  listApprovals(filters: ApprovalFilters): ApprovalPage {
    const now = new Date().toISOString();
    const query = approvalListQuery(filters, now);
    const rows = this.#sql.exec<ApprovalRow>(query.sql, ...query.params).toArray();
    const page = cutPage(rows, query.limit, (row) => ({ created_at: row.created_at, id: row.id }));
    const nowMs = Date.parse(now);
    return {
      approvals: page.rows.map((row) => {
        const approval = approvalFromRow(row, now);
        return { ...approval, duplicates: findDuplicates(this.#sql, approval, nowMs).length };
      }),
      next_cursor: page.next_cursor,
    };
  }

  /**
   * Records what a run's ledger tells about it. Writes may arrive late, twice or out of order (a
   * ledger re-sends after a restart), so each one only adds: tools and subjects are unions, a closed
   * run stays closed, and counters and times only move forward.
   */
  indexRun(entry: RunIndexEntry): void {
    const known = this.#sql
      .exec<{ tools: string; subjects: string }>(
        "SELECT tools, subjects FROM runs WHERE run_id = ?",
        entry.run_id,
      )
      .toArray()[0];
    const tools = mergeSorted(known ? (JSON.parse(known.tools) as string[]) : [], entry.tools);
    const subjects = mergeSorted(known ? (JSON.parse(known.subjects) as string[]) : [], entry.subjects);
    this.#sql.exec(
      `INSERT INTO runs (run_id, namespace, state, created_at, deadline_at, ended_at, calls_used, tools, subjects, last_activity_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET
         state = CASE WHEN runs.state = 'closed' THEN 'closed' ELSE excluded.state END,
         ended_at = COALESCE(runs.ended_at, excluded.ended_at),
         calls_used = MAX(runs.calls_used, excluded.calls_used),
         tools = excluded.tools,
         subjects = excluded.subjects,
         last_activity_at = MAX(runs.last_activity_at, excluded.last_activity_at)`,
      entry.run_id,
      entry.namespace,
      entry.state,
      entry.created_at,
      entry.deadline_at,
      entry.ended_at,
      entry.calls_used,
      JSON.stringify(tools),
      JSON.stringify(subjects),
      entry.last_activity_at,
    );
  }

  /** One page of runs, newest first. An open run past its deadline is listed as expired. */
  listRuns(filters: RunFilters): RunPage {
    const now = new Date().toISOString();
    const query = runListQuery(filters, now);
    const rows = this.#sql.exec<RunRow>(query.sql, ...query.params).toArray();
    const page = cutPage(rows, query.limit, (row) => ({ created_at: row.created_at, id: row.run_id }));
    return { runs: page.rows.map((row) => runFromRow(row, now)), next_cursor: page.next_cursor };
  }

  /** The other runs' approvals of the same destructive call, pending or gone ahead within the window. */
  duplicatesOf(approvalId: string): ApprovalDuplicate[] {
    const now = new Date();
    const row = this.#sql.exec<ApprovalRow>("SELECT * FROM approvals WHERE id = ?", approvalId).toArray()[0];
    return row ? findDuplicates(this.#sql, approvalFromRow(row, now.toISOString()), now.getTime()) : [];
  }

  /** Which run holds an approval, or null when this tenant has no such approval. */
  runOf(id: string): string | null {
    const row = this.#sql
      .exec<{ run_id: string }>("SELECT run_id FROM approvals WHERE id = ?", id)
      .toArray()[0];
    return row?.run_id ?? null;
  }
}
