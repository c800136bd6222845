import type { RunLimits } from "../config/tenants";
import type { Envelope, EnvironmentName } from "../envelope";
import type { AttemptRecord } from "../pipeline/execute";
import type { Counters } from "./budget";
import { migrateLedger } from "./schema";
import { type TraceEntry, type TraceRow, traceEntryFromRow } from "./trace";

/** Which call first brought third-party text into the run. */
export interface Taint {
  call_id: string;
  tool: string;
  at: string;
}

export interface RunMeta {
  tenant: string;
  run_id: string;
  namespace: string;
  environment: EnvironmentName;
  catalog_version: string;
  limits: RunLimits;
  repeat_threshold: number;
  state: "open" | "closed";
  created_at: number;
  deadline_at: number;
  ended_at: number | null;
  counters: Counters;
  /** Random per run: untrusted text is fenced with it, so the text cannot forge the fence. */
  fence_marker: string;
  tainted_by: Taint | null;
}

/** reserved: written before the request leaves; in_doubt: its fate is unknown; completed: stored outcome. */
export type KeyState = "reserved" | "in_doubt" | "completed";

export interface KeyRecord {
  key: string;
  tool: string;
  state: KeyState;
  envelope: Envelope | null;
  upstream_sends: number;
}

export interface NewTraceEntry {
  call_id: string;
  /** "agent", or "operator:<id>" for a call an operator's approval executed. */
  actor?: string;
  started_at: number;
  tool: string | null;
  side_effect: string | null;
  args: unknown;
  call_digest: string;
  idempotency_key: string | null;
  catalog_version: string;
}

export interface TraceCompletion {
  ended_at: number;
  /** What the model was given (masked, fenced, or the summary of a paged result), if small enough to keep. */
  result?: unknown;
  outcome: string;
  error_code: string | null;
  upstream_status: number | null;
  replayed: boolean;
  attempts: readonly AttemptRecord[];
}

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
}

/**
 * Typed access to one run's SQLite database. Every method is synchronous: callers group them in
 * `transactionSync` so a charge, a key reservation and a trace entry commit together or not at all.
 */
export class RunStore {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  migrate(): void {
    migrateLedger(this.#sql);
  }

  readRun(): RunMeta | null {
    const row = this.#sql.exec<RunRow>("SELECT * FROM run WHERE id = 1").toArray()[0];
    if (!row) return null;
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
    };
  }

  insertRun(run: RunMeta): void {
    this.#sql.exec(
      `INSERT INTO run (id, tenant, run_id, namespace, environment, catalog_version, limits, repeat_threshold, state,
         created_at, deadline_at, ended_at, calls_used, writes_used, destructive_used, fence_marker)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0, 0, 0, ?)`,
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
    );
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

  readKey(key: string): KeyRecord | null {
    const row = this.#sql
      .exec<{ key: string; tool: string; state: string; envelope: string | null; upstream_sends: number }>(
        "SELECT key, tool, state, envelope, upstream_sends FROM idempotency WHERE key = ?",
        key,
      )
      .toArray()[0];
    if (!row) return null;
    return {
      key: row.key,
      tool: row.tool,
      state: row.state as KeyState,
      envelope: row.envelope === null ? null : (JSON.parse(row.envelope) as Envelope),
      upstream_sends: row.upstream_sends,
    };
  }

  /** Records that a request with this key is about to leave (first send or a resend of an in-doubt key). */
  reserveKey(key: string, tool: string, now: number): void {
    this.#sql.exec(
      `INSERT INTO idempotency (key, tool, state, envelope, upstream_sends, created_at, updated_at)
       VALUES (?, ?, 'reserved', NULL, 1, ?, ?)
       ON CONFLICT (key) DO UPDATE SET state = 'reserved', upstream_sends = upstream_sends + 1, updated_at = excluded.updated_at`,
      key,
      tool,
      now,
      now,
    );
  }

  settleKey(key: string, state: Exclude<KeyState, "reserved">, envelope: Envelope | null, now: number): void {
    this.#sql.exec(
      "UPDATE idempotency SET state = ?, envelope = ?, updated_at = ? WHERE key = ?",
      state,
      envelope === null ? null : JSON.stringify(envelope),
      now,
      key,
    );
  }

  /**
   * How many dispatches of this run had the same tool and canonical arguments. Asking again about a
   * pending approval is what the agent was told to do, so those answers do not count as repeats.
   */
  countDigest(digest: string): number {
    const row = this.#sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM trace WHERE call_digest = ? AND actor = 'agent' AND (error_code IS NULL OR error_code != 'approval_required')",
        digest,
      )
      .one();
    return row.n;
  }

  insertTrace(entry: NewTraceEntry): number {
    this.#sql.exec(
      `INSERT INTO trace (call_id, actor, started_at, tool, side_effect, args, call_digest, outcome, idempotency_key, catalog_version)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
      entry.call_id,
      entry.actor ?? "agent",
      entry.started_at,
      entry.tool,
      entry.side_effect,
      JSON.stringify(entry.args ?? null),
      entry.call_digest,
      entry.idempotency_key,
      entry.catalog_version,
    );
    return this.#sql.exec<{ seq: number }>("SELECT last_insert_rowid() AS seq").one().seq;
  }

  completeTrace(seq: number, completion: TraceCompletion): void {
    this.#sql.exec(
      `UPDATE trace SET ended_at = ?, outcome = ?, error_code = ?, upstream_status = ?, replayed = ?, attempts = ?,
         latency_ms = ? - started_at, result = ? WHERE seq = ?`,
      completion.ended_at,
      completion.outcome,
      completion.error_code,
      completion.upstream_status,
      completion.replayed ? 1 : 0,
      JSON.stringify(completion.attempts),
      completion.ended_at,
      completion.result === undefined ? null : JSON.stringify(completion.result),
      seq,
    );
  }

  readTrace(): TraceEntry[] {
    return this.#sql
      .exec<TraceRow & Record<string, SqlStorageValue>>("SELECT * FROM trace ORDER BY seq")
      .toArray()
      .map(traceEntryFromRow);
  }
}
