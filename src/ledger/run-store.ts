import type { Counters } from "../machine/budget";
import type { OpenEntry } from "../machine/run-events";
import type { NewTraceEntry, RunMeta, Taint, TraceCompletion } from "../machine/run-state";
import type { ToolPins } from "../machine/tool-pins";
import type { EnvironmentName } from "../wire/envelope";
import type { RunLimits } from "../wire/run-status";
import type { RunUser } from "../wire/run-user";
import { type TraceEntry, type TraceRow, traceEntryFromRow } from "../wire/trace-entry";
import { createLedger, migrateExistingLedger } from "./schema";

interface RunRow extends Record<string, SqlStorageValue> {
  tenant: string;
  run_id: string;
  namespace: string;
  environment: string;
  catalog_version: string;
  limits: string;
  repeat_threshold: number;
  state: string;
  created_at: number;
  deadline_at: number;
  ended_at: number | null;
  calls_used: number;
  writes_used: number;
  destructive_used: number;
  fence_marker: string;
  tainted_by: string | null;
  tools: string | null;
  added_tools: string;
  reach: string | null;
  told: string | null;
  acts_for: string | null;
  profile: string | null;
  tool_versions: string | null;
}

/**
 * Typed access to one run's SQLite database. Every method is synchronous: callers group them in
 * `transactionSync` so a charge, a key reservation and a trace entry commit together or not at all.
 */
export class RunStore {
  readonly #sql: SqlStorage;
  /**
   * What the per-call counts would read from the trace, kept in memory: this object is the trace's
   * single writer. Each is loaded from storage on first need (a digest's count once per digest),
   * then moved by the trace writes below, in the transaction that writes them; a transaction that
   * fails must call `forget`, so memory is read again from what storage kept.
   */
  readonly #repeats = new Map<string, number>();
  #discovery: number | null = null;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Drops the counts kept in memory: the next call reads them from storage again. */
  forget(): void {
    this.#repeats.clear();
    this.#discovery = null;
  }

  /** At wake: brings an existing schema up to date (one statement when current); false when there is none. */
  migrateExisting(): boolean {
    return migrateExistingLedger(this.#sql);
  }

  /** Creates the schema in a database known to hold none (a fresh object, or one whose data was deleted). */
  create(): void {
    createLedger(this.#sql);
  }

  readRun(): RunMeta | null {
    const row = this.#sql.exec<RunRow>("SELECT * FROM run WHERE id = 1").toArray()[0];
    return row ? runOf(row) : null;
  }

  /** What the directory has been told of the run (`RunIndex.told`); in the commit that enqueues it. */
  writeTold(told: string): void {
    this.#sql.exec("UPDATE run SET told = ? WHERE id = 1", told);
  }

  /**
   * A woken ledger's first read: the run, and in the same statement what the other stores keep in
   * memory of their tables (when the outbox's first message is due, how many approvals there are
   * and how many pending, the scenario's uses left, what the directory was told of the run), so
   * none of them asks again on the first call.
   * Null when the run table holds no run.
   */
  readRunAtWake(): { run: RunMeta; memory: WakeMemory } | null {
    const row = this.#sql
      .exec<RunRow & { wake_outbox_next: number | null } & WakeCounts>(
        `SELECT run.*,
           (SELECT MIN(next_attempt_at) FROM outbox) AS wake_outbox_next,
           (SELECT COUNT(*) FROM approvals) AS wake_approvals,
           (SELECT COALESCE(SUM(state = 'pending'), 0) FROM approvals) AS wake_pending,
           (SELECT COALESCE(SUM(remaining), 0) FROM scenario) AS wake_scenario
         FROM run WHERE id = 1`,
      )
      .toArray()[0];
    if (!row) return null;
    return {
      run: runOf(row),
      memory: {
        outboxNext: row.wake_outbox_next,
        approvals: { total: row.wake_approvals, pending: row.wake_pending },
        scenarioLeft: row.wake_scenario,
        told: typeof row.told === "string" ? row.told : null,
      },
    };
  }

  insertRun(run: RunMeta): void {
    this.#sql.exec(
      `INSERT INTO run (id, tenant, run_id, namespace, environment, catalog_version, limits, repeat_threshold, state,
         created_at, deadline_at, ended_at, calls_used, writes_used, destructive_used, fence_marker, tools, reach, acts_for,
         profile, tool_versions)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0, 0, 0, ?, ?, ?, ?, ?, ?)`,
      run.tenant,
      run.run_id,
      run.namespace,
      run.environment,
      run.catalog_version,
      JSON.stringify(run.limits),
      run.repeat_threshold,
      run.state,
      run.created_at,
      run.deadline_at,
      run.fence_marker,
      run.tools == null ? null : JSON.stringify(run.tools),
      JSON.stringify(run.reach ?? [run.namespace]),
      run.user == null ? null : JSON.stringify(run.user),
      run.profile ?? null,
      JSON.stringify(run.tool_versions ?? {}),
    );
  }

  /** The run's pins of its tools' versions, as they are after a commit that pinned more. */
  writeToolPins(pins: ToolPins): void {
    this.#sql.exec("UPDATE run SET tool_versions = ? WHERE id = 1", JSON.stringify(pins));
  }

  /** Records the run's tool set after an add: the refs it holds now. */
  writeAddedTools(refs: readonly string[]): void {
    this.#sql.exec("UPDATE run SET added_tools = ? WHERE id = 1", JSON.stringify(refs));
  }

  /** How many `find_tools` and `use_tool` calls the run made: they share one cap. Read from storage once. */
  countDiscovery(): number {
    this.#discovery ??= this.#sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM trace WHERE actor = 'agent' AND (tool = 'find_tools' OR via = 'use_tool')",
      )
      .one().n;
    return this.#discovery;
  }

  insertTask(task: { key: string; request: Record<string, unknown> }): void {
    this.#sql.exec(
      "INSERT INTO task (id, task_key, request) VALUES (1, ?, ?)",
      task.key,
      JSON.stringify(task.request),
    );
  }

  /** The task the run was opened for, or null when it was opened without a task key. */
  task(): { key: string; request: Record<string, unknown> } | null {
    const row = this.#sql
      .exec<{ task_key: string; request: string }>("SELECT task_key, request FROM task WHERE id = 1")
      .toArray()[0];
    return row ? { key: row.task_key, request: JSON.parse(row.request) as Record<string, unknown> } : null;
  }

  taint(taint: Taint): void {
    this.#sql.exec(
      "UPDATE run SET tainted_by = ? WHERE id = 1 AND tainted_by IS NULL",
      JSON.stringify(taint),
    );
  }

  writeCounters(counters: Counters): void {
    this.#sql.exec(
      "UPDATE run SET calls_used = ?, writes_used = ?, destructive_used = ? WHERE id = 1",
      counters.calls_used,
      counters.writes_used,
      counters.destructive_used,
    );
  }

  closeRun(endedAt: number): void {
    this.#sql.exec("UPDATE run SET state = 'closed', ended_at = ? WHERE id = 1", endedAt);
  }

  /**
   * How many dispatches of this run had the same tool and canonical arguments. Asking again about a
   * pending approval is what the agent was told to do, so those answers do not count as repeats.
   */
  countDigest(digest: string): number {
    const kept = this.#repeats.get(digest);
    if (kept !== undefined) return kept;
    const { n } = this.#sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM trace WHERE call_digest = ? AND actor = 'agent' AND (error_code IS NULL OR error_code != 'approval_required')",
        digest,
      )
      .one();
    this.#repeats.set(digest, n);
    return n;
  }

  /**
   * The agent's polls of one call (its digest) since a moment: the polls of the approval asked for
   * then. Read only for a poll, over the few entries of one digest (`trace_by_digest`).
   */
  countPolls(digest: string, since: number): number {
    return this.#sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM trace WHERE call_digest = ? AND actor = 'agent' AND poll IS NOT NULL AND started_at >= ?",
        digest,
        since,
      )
      .one().n;
  }

  /** Moves the counts kept in memory as a new trace entry does: the same rules as their queries. */
  #counted(entry: NewTraceEntry, completion: TraceCompletion | null): void {
    if (entry.actor !== "agent") return;
    if (this.#discovery !== null && (entry.tool === "find_tools" || entry.via === "use_tool")) {
      this.#discovery += 1;
    }
    const kept = this.#repeats.get(entry.call_digest);
    if (kept !== undefined && completion?.error_code !== "approval_required") {
      this.#repeats.set(entry.call_digest, kept + 1);
    }
  }

  /**
   * Opens a trace entry, or writes it whole when its completion is already known (a refusal, or a
   * read whose admission commits with its outcome): one statement either way.
   */
  insertTrace(entry: NewTraceEntry, completion: TraceCompletion | null = null): void {
    this.#sql.exec(
      `INSERT INTO trace (call_id, actor, actor_name, started_at, tool, side_effect, args, call_digest, outcome,
         idempotency_key, catalog_version, ended_at, error_code, upstream_status, replayed, attempts, latency_ms, result,
         claim_ms, via, edit, poll, traceparent)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      entry.call_id,
      entry.actor,
      entry.actor_name ?? null,
      entry.started_at,
      entry.tool,
      entry.side_effect,
      JSON.stringify(entry.args ?? null),
      entry.call_digest,
      completion?.outcome ?? "pending",
      entry.idempotency_key,
      entry.catalog_version,
      completion?.ended_at ?? null,
      completion?.error_code ?? null,
      completion?.upstream_status ?? null,
      completion?.replayed ? 1 : 0,
      JSON.stringify(completion?.attempts ?? []),
      completion ? completion.ended_at - entry.started_at : null,
      completion?.result === undefined ? null : JSON.stringify(completion.result),
      entry.claim_ms ?? null,
      entry.via ?? null,
      entry.edit ? JSON.stringify(entry.edit) : null,
      entry.poll_charged ? 2 : entry.poll ? 1 : null,
      entry.traceparent ? JSON.stringify(entry.traceparent) : null,
    );
    this.#counted(entry, completion);
  }

  /** Completes an open entry, found through the index of open entries (`trace_open_by_call`). */
  completeTrace(callId: string, completion: TraceCompletion): void {
    // An entry that counted as a repeat while open would stop counting: its digest is not at hand.
    if (completion.error_code === "approval_required") this.#repeats.clear();
    this.#sql.exec(
      `UPDATE trace SET ended_at = ?, outcome = ?, error_code = ?, upstream_status = ?, replayed = ?, attempts = ?,
         latency_ms = ? - started_at, result = ? WHERE call_id = ? AND ended_at IS NULL`,
      completion.ended_at,
      completion.outcome,
      completion.error_code,
      completion.upstream_status,
      completion.replayed ? 1 : 0,
      JSON.stringify(completion.attempts),
      completion.ended_at,
      completion.result === undefined ? null : JSON.stringify(completion.result),
      callId,
    );
  }

  /**
   * What the audit log records of an open entry's call (its actor, masked arguments, digest), read
   * through the index of open entries before the settlement that closes it.
   */
  openEntry(callId: string): OpenCall | null {
    const row = this.#sql
      .exec<{ actor: string; actor_name: string | null; args: string; call_digest: string }>(
        "SELECT actor, actor_name, args, call_digest FROM trace WHERE call_id = ? AND ended_at IS NULL",
        callId,
      )
      .toArray()[0];
    return row ? { ...row, args: JSON.parse(row.args) as unknown } : null;
  }

  /**
   * Entries opened and never closed: calls being sent now, or cut off by a restart. Read by the
   * alarm only, through the index of open entries: the closed ones, however many, are not read.
   */
  readOpenEntries(): OpenEntry[] {
    return this.#sql
      .exec<{ call_id: string; tool: string | null; idempotency_key: string | null }>(
        // Named, so SQLite does not prefer a scan in the table's own order (which spares it a sort).
        "SELECT call_id, tool, idempotency_key FROM trace INDEXED BY trace_open_by_call WHERE ended_at IS NULL ORDER BY seq",
      )
      .toArray();
  }

  /**
   * Up to `limit` entries after the sequence number `afterSeq`, and the cursor of the next page. One
   * more entry is read than returned to know whether there is one.
   */
  readTracePage(afterSeq: number, limit: number): { entries: TraceEntry[]; next_cursor: string | null } {
    const rows = this.#sql
      .exec<TraceRow & Record<string, SqlStorageValue>>(
        "SELECT * FROM trace WHERE seq > ? ORDER BY seq LIMIT ?",
        afterSeq,
        limit + 1,
      )
      .toArray()
      .map(traceEntryFromRow);
    const entries = rows.slice(0, limit);
    const last = entries.at(-1);
    return { entries, next_cursor: rows.length > limit && last ? String(last.seq) : null };
  }

  readTrace(): TraceEntry[] {
    return this.#sql
      .exec<TraceRow & Record<string, SqlStorageValue>>("SELECT * FROM trace ORDER BY seq")
      .toArray()
      .map(traceEntryFromRow);
  }
}

interface WakeCounts extends Record<string, SqlStorageValue> {
  wake_approvals: number;
  wake_pending: number;
  wake_scenario: number;
}

/** An open trace entry's call, as `openEntry` reads it. */
export interface OpenCall {
  actor: string;
  actor_name: string | null;
  args: unknown;
  call_digest: string;
}

/** What the other stores of a woken ledger learn from its first read (`readRunAtWake`). */
export interface WakeMemory {
  outboxNext: number | null;
  approvals: { total: number; pending: number };
  scenarioLeft: number;
  /** What the directory was told of the run, as `RunIndex.told` wrote it; null when nothing yet. */
  told: string | null;
}

function runOf(row: RunRow): RunMeta {
  return {
    tenant: row.tenant,
    run_id: row.run_id,
    namespace: row.namespace,
    environment: row.environment as EnvironmentName,
    catalog_version: row.catalog_version,
    limits: JSON.parse(row.limits) as RunLimits,
    repeat_threshold: row.repeat_threshold,
    state: row.state === "closed" ? "closed" : "open",
    created_at: row.created_at,
    deadline_at: row.deadline_at,
    ended_at: row.ended_at,
    counters: {
      calls_used: row.calls_used,
      writes_used: row.writes_used,
      destructive_used: row.destructive_used,
    },
    fence_marker: row.fence_marker,
    tainted_by: row.tainted_by === null ? null : (JSON.parse(row.tainted_by) as Taint),
    tools: row.tools === null ? null : (JSON.parse(row.tools) as string[]),
    added_tools: JSON.parse(row.added_tools) as string[],
    // A run opened before runs had tool sets reaches its own namespace only.
    reach: row.reach === null ? [row.namespace] : (JSON.parse(row.reach) as string[]),
    user: row.acts_for === null ? null : (JSON.parse(row.acts_for) as RunUser),
    profile: row.profile ?? null,
    // A run opened before pins were kept pins each tool at its next call.
    tool_versions: row.tool_versions === null ? {} : (JSON.parse(row.tool_versions) as ToolPins),
  };
}
