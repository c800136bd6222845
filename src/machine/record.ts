import type { Envelope } from "../wire/envelope";
import type { TraceCompletion } from "./run-state";

/**
 * Stage "record": what the trace keeps of a call once it has an answer. The ledger commits it in
 * the same transaction as the key's outcome, so the trace never says more or less than the key.
 */

const TRACE_RESULT_BYTES = 4 * 1024;

/** What the trace keeps of a result: the model's view when small, else only that it was omitted. */
export function traceable(data: unknown): unknown {
  const text = JSON.stringify(data ?? null);
  return text.length <= TRACE_RESULT_BYTES ? (data ?? null) : { omitted_bytes: text.length };
}

/** The trace completion of an answer; a dispatch adds what it saw upstream. */
export function completionOf(
  envelope: Envelope,
  now: number,
  extra: Partial<TraceCompletion> = {},
): TraceCompletion {
  return {
    ended_at: now,
    outcome: envelope.outcome,
    error_code: envelope.error?.code ?? null,
    upstream_status: null,
    replayed: envelope.replayed,
    attempts: [],
    ...extra,
  };
}
