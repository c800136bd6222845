import type { Outcome } from "../envelope";
import type { AttemptRecord } from "../pipeline/dispatch";

/** One dispatch of a run, written ahead ("pending") and completed when the call ends. */
export interface TraceEntry {
  seq: number;
  call_id: string;
  /** "agent", or "operator:<id>" when an operator's approval executed the call. */
  actor: string;
  started_at: string;
  ended_at: string | null;
  tool: string | null;
  side_effect: string | null;
  /** Canonical arguments as sent by the agent, sensitive fields masked. */
  args: unknown;
  outcome: Outcome | "pending";
  error_code: string | null;
  upstream_status: number | null;
  latency_ms: number | null;
  idempotency_key: string | null;
  replayed: boolean;
  /** What the model was given, masked and fenced as it saw it; null when not kept. */
  result: unknown;
  /** Every upstream attempt this dispatch made; empty when nothing left the proxy. */
  upstream_attempts: AttemptRecord[];
  catalog_version: string;
}

export interface TraceRow {
  seq: number;
  call_id: string;
  actor: string;
  started_at: number;
  ended_at: number | null;
  tool: string | null;
  side_effect: string | null;
  args: string;
  outcome: string;
  error_code: string | null;
  upstream_status: number | null;
  latency_ms: number | null;
  idempotency_key: string | null;
  replayed: number;
  attempts: string;
  catalog_version: string;
  result: string | null;
}

export function traceEntryFromRow(row: TraceRow): TraceEntry {
  return {
    seq: row.seq,
    call_id: row.call_id,
    actor: row.actor,
    started_at: new Date(row.started_at).toISOString(),
    ended_at: row.ended_at === null ? null : new Date(row.ended_at).toISOString(),
    tool: row.tool,
    side_effect: row.side_effect,
    args: JSON.parse(row.args) as unknown,
    outcome: row.outcome as TraceEntry["outcome"],
    error_code: row.error_code,
    upstream_status: row.upstream_status,
    latency_ms: row.latency_ms,
    idempotency_key: row.idempotency_key,
    replayed: row.replayed === 1,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    upstream_attempts: JSON.parse(row.attempts) as AttemptRecord[],
    catalog_version: row.catalog_version,
  };
}
