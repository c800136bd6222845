import type { AnswerText } from "./idempotency";
import type { ArmedFault, FaultMode, FaultPlan, RequestLogEntry } from "./model";
import { type FaultRow, type RequestRow, toFault, toRequestLogEntry } from "./rows";

/**
 * Armed faults and the request log, both keyed by run id: together they let a test script an
 * upstream failure for one run and then prove exactly what reached the upstream.
 */

/** What the worker knows about a request before it is processed. */
export interface RequestMeta {
  tenant: string | null;
  run_id: string | null;
  tool: string | null;
  method: string;
  path: string;
  idempotency_key: string | null;
  /** The W3C `traceparent` header the request carried, or null: how a test sees the proxy propagate a trace. */
  traceparent: string | null;
}

/**
 * What the store did with a request in one commit (`SandboxStore.serveRead`, `serveEffect`): the
 * answer, logged, with the delivery fault (if any) still to play; or, with `answer` null, a fault
 * that answers instead of the application or holds the request up, admitted and logged (`seq`),
 * which the lifecycle plays before the work is done.
 */
export interface ServedRequest {
  seq: number | null;
  fault: FaultPlan | null;
  answer: AnswerText | null;
}

export interface FaultSpec extends FaultPlan {
  run_id: string;
  path_prefix: string | null;
  times: number;
}

export function armFault(sql: SqlStorage, spec: FaultSpec, at: string): ArmedFault {
  const row = sql
    .exec<FaultRow>(
      `INSERT INTO faults (run_id, path_prefix, mode, remaining, hang_ms, retry_after_s, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      spec.run_id,
      spec.path_prefix,
      spec.mode,
      spec.times,
      spec.hang_ms,
      spec.retry_after_s,
      at,
    )
    .one();
  return toFault(row);
}

export function listFaults(sql: SqlStorage): ArmedFault[] {
  return sql.exec<FaultRow>("SELECT * FROM faults ORDER BY fault_id").toArray().map(toFault);
}

/**
 * Consumes one use of the oldest fault armed for this run whose prefix matches and that the
 * endpoint can suffer (`fits`), so several faults armed for one run fire in the order they were
 * armed, and a `stale` armed without a prefix waits for the next read instead of being wasted.
 */
export function takeFault(
  sql: SqlStorage,
  runId: string,
  path: string,
  fits: (mode: FaultMode) => boolean,
): ArmedFault | null {
  const candidates = sql
    .exec<FaultRow>("SELECT * FROM faults WHERE run_id = ? AND remaining > 0 ORDER BY fault_id", runId)
    .toArray()
    .map(toFault);
  const row = candidates.find(
    (f) => (f.path_prefix === null || path.startsWith(f.path_prefix)) && fits(f.mode),
  );
  if (!row) return null;
  if (row.remaining <= 1) sql.exec("DELETE FROM faults WHERE fault_id = ?", row.fault_id);
  else sql.exec("UPDATE faults SET remaining = remaining - 1 WHERE fault_id = ?", row.fault_id);
  return { ...row, remaining: row.remaining - 1 };
}

export function logRequest(
  sql: SqlStorage,
  meta: RequestMeta,
  at: string,
  fault: FaultMode | null,
  status: number | null,
): number {
  const phase = status === null ? "started" : "completed";
  const row = sql
    .exec<{ seq: number }>(
      `INSERT INTO requests (at, tenant, run_id, tool, method, path, idempotency_key, fault, status, phase, traceparent)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      at,
      meta.tenant,
      meta.run_id,
      meta.tool,
      meta.method,
      meta.path,
      meta.idempotency_key,
      fault,
      status,
      phase,
      meta.traceparent,
    )
    .one();
  return row.seq;
}

export function completeRequest(sql: SqlStorage, seq: number, status: number): void {
  sql.exec("UPDATE requests SET status = ?, phase = 'completed' WHERE seq = ?", status, seq);
}

export function listRequests(sql: SqlStorage, runId: string | null): RequestLogEntry[] {
  const rows =
    runId === null
      ? sql.exec<RequestRow>("SELECT * FROM requests ORDER BY seq").toArray()
      : sql.exec<RequestRow>("SELECT * FROM requests WHERE run_id = ? ORDER BY seq", runId).toArray();
  return rows.map(toRequestLogEntry);
}
