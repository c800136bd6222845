import { executionOfState } from "../approvals/execution";
import type { ApprovalFilters, RunFilters } from "../approvals/list-filters";
import { DEFAULT_LIST_LIMIT } from "../approvals/list-limits";
import { isOverdue } from "../approvals/model";
import type { PageCursor } from "../approvals/page-cursor";
import type { SubjectQuery } from "../approvals/subjects";
import type { ApprovalSummary } from "../wire/approval";
import type { RunSummary } from "../wire/run-summary";

/**
 * The directory's list queries, built from the operator's filters: a WHERE clause with its
 * parameters, newest first, keyset-paged, and one row past the limit so the page knows whether
 * another follows. Pure, so the directory only runs what these return.
 */

export interface ListQuery {
  sql: string;
  params: SqlStorageValue[];
  limit: number;
}

interface Conditions {
  where: string[];
  params: SqlStorageValue[];
}

function add(conditions: Conditions, sql: string, ...params: SqlStorageValue[]): void {
  conditions.where.push(sql);
  conditions.params.push(...params);
}

/** A `key=value` in the JSON array `column`: that exact pair, or the value under any key. */
function addSubject(conditions: Conditions, column: string, subject: SubjectQuery): void {
  if (subject.key !== null) {
    add(
      conditions,
      `EXISTS (SELECT 1 FROM json_each(${column}) WHERE json_each.value = ?)`,
      `${subject.key}=${subject.value}`,
    );
    return;
  }
  add(
    conditions,
    `EXISTS (SELECT 1 FROM json_each(${column}) WHERE substr(json_each.value, instr(json_each.value, '=') + 1) = ?)`,
    subject.value,
  );
}

/** The shared tail: the time window, the page's start, the order and the limit. */
function finish(
  table: string,
  idColumn: string,
  conditions: Conditions,
  filters: { since?: string; until?: string; cursor?: PageCursor; limit?: number },
): ListQuery {
  if (filters.since !== undefined) add(conditions, "created_at >= ?", filters.since);
  if (filters.until !== undefined) add(conditions, "created_at < ?", filters.until);
  if (filters.cursor !== undefined) {
    add(
      conditions,
      `(created_at < ? OR (created_at = ? AND ${idColumn} < ?))`,
      filters.cursor.created_at,
      filters.cursor.created_at,
      filters.cursor.id,
    );
  }
  const limit = filters.limit ?? DEFAULT_LIST_LIMIT;
  const where = conditions.where.length > 0 ? ` WHERE ${conditions.where.join(" AND ")}` : "";
  return {
    sql: `SELECT * FROM ${table}${where} ORDER BY created_at DESC, ${idColumn} DESC LIMIT ?`,
    params: [...conditions.params, limit + 1],
    limit,
  };
}

/** Approvals by state (a pending one past its expiry counts as expired), tool, subject, run and time. */
export function approvalListQuery(filters: ApprovalFilters, now: string): ListQuery {
  const conditions: Conditions = { where: [], params: [] };
  switch (filters.state) {
    case "all":
      break;
    case "pending":
      add(conditions, "state = 'pending' AND expires_at > ?", now);
      break;
    case "expired":
      add(conditions, "(state = 'expired' OR (state = 'pending' AND expires_at <= ?))", now);
      break;
    default:
      add(conditions, "state = ?", filters.state);
  }
  if (filters.tool !== undefined) add(conditions, "tool = ?", filters.tool);
  if (filters.run_id !== undefined) add(conditions, "run_id = ?", filters.run_id);
  if (filters.subject !== undefined) addSubject(conditions, "subjects", filters.subject);
  return finish("approvals", "id", conditions, filters);
}

/** Runs by state (an open run past its deadline is expired), tool called, subject named and time. */
export function runListQuery(filters: RunFilters, now: string): ListQuery {
  const conditions: Conditions = { where: [], params: [] };
  switch (filters.state) {
    case "all":
      break;
    case "open":
      add(conditions, "state = 'open' AND deadline_at > ?", now);
      break;
    case "expired":
      add(conditions, "state = 'open' AND deadline_at <= ?", now);
      break;
    case "closed":
      add(conditions, "state = 'closed'");
      break;
  }
  if (filters.tool !== undefined) {
    add(conditions, "EXISTS (SELECT 1 FROM json_each(tools) WHERE json_each.value = ?)", filters.tool);
  }
  if (filters.subject !== undefined) addSubject(conditions, "subjects", filters.subject);
  return finish("runs", "run_id", conditions, filters);
}

export interface ApprovalRow extends Record<string, SqlStorageValue> {
  id: string;
  args_digest: string;
  decided_at: string | null;
  created_at: string;
  summary: string;
}

/** The summary fields that came later: a summary stored before them lacks them. */
type LaterField =
  | "args_digest"
  | "decided_at"
  | "decided_by_name"
  | "sla_due_at"
  | "overdue"
  | "escalated_at"
  | "approver_roles"
  | "approvals_required"
  | "approvers"
  | "execution"
  | "user";

/** A summary as stored: those written before these fields existed lack them. */
type StoredSummary = Omit<ApprovalSummary, LaterField> & Partial<Pick<ApprovalSummary, LaterField>>;

/**
 * A listed approval. A summary lacking a newer field gets it from its column, or null where no
 * column holds it; one stored before summaries named their approvers reads as any operator's, one
 * approval (the ledger's next change of it writes the whole summary again). A pending approval past
 * its expiry is shown as expired; whether it is overdue is worked out now, never taken from the
 * stored copy.
 */
export function approvalFromRow(row: ApprovalRow, now: string): ApprovalSummary {
  const stored = JSON.parse(row.summary) as StoredSummary;
  const summary: ApprovalSummary = {
    ...stored,
    args_digest: stored.args_digest ?? row.args_digest,
    decided_at: stored.decided_at ?? row.decided_at,
    decided_by_name: stored.decided_by_name ?? null,
    sla_due_at: stored.sla_due_at ?? null,
    escalated_at: stored.escalated_at ?? null,
    approver_roles: stored.approver_roles ?? [],
    approvals_required: stored.approvals_required ?? 1,
    approvers: stored.approvers ?? [],
    user: stored.user ?? null,
    // One stored before executions were recorded: a rejected or expired one's call never left.
    execution: stored.execution !== undefined ? stored.execution : executionOfState(stored.state, null),
    overdue: false,
  };
  const listed: ApprovalSummary =
    summary.state === "pending" && summary.expires_at <= now
      ? { ...summary, state: "expired", execution: "not_sent" }
      : summary;
  return { ...listed, overdue: isOverdue(listed, Date.parse(now)) };
}

export interface RunRow extends Record<string, SqlStorageValue> {
  run_id: string;
  namespace: string;
  state: string;
  created_at: string;
  deadline_at: string;
  ended_at: string | null;
  calls_used: number;
  tools: string;
  subjects: string;
  last_activity_at: string;
}

export function runFromRow(row: RunRow, now: string): RunSummary {
  const state = row.state === "closed" ? "closed" : row.deadline_at <= now ? "expired" : "open";
  return {
    run_id: row.run_id,
    namespace: row.namespace,
    state,
    created_at: row.created_at,
    deadline_at: row.deadline_at,
    ended_at: row.ended_at,
    calls_used: row.calls_used,
    tools: JSON.parse(row.tools) as string[],
    subjects: JSON.parse(row.subjects) as string[],
    last_activity_at: row.last_activity_at,
  };
}
