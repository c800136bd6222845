import type { ToolSpec } from "../catalog/define-tool";
import { type Execution, upstreamTarget } from "../machine/request";
import type { StoredRequest } from "../machine/run-state";

/**
 * A write's answer lost on the way. A 2xx that arrives cut off or unparsable says the upstream
 * acted, but not what it made, so the postcondition has no id to read back. The upstream kept its
 * answer under the idempotency key; when the tool declares where (`observe.answer_by_key`), that
 * answer is read (a GET: asking never runs the write) and stands in for the lost one, and the
 * postcondition then confirms or refutes it as it would any success. When it cannot be read, the
 * answer stays unknown and the key in doubt.
 */

/** The read of the answer stored under `key`, when `execution` lost a success and the tool says where to read it. */
export function lostAnswerRead(
  tool: ToolSpec,
  key: string,
  callId: string,
  execution: Execution,
): { tool: ToolSpec; request: StoredRequest } | null {
  if (execution.ok || execution.status === null || execution.status < 200 || execution.status >= 300)
    return null;
  // Only an answer whose effect is unknown: a partial success already says what happened.
  if (execution.failure.side_effect_confirmed !== null) return null;
  const path = tool.observe?.answer_by_key?.(key);
  if (!path) return null;
  return {
    // Sent as a read of the same tool (its credential, its output contract): nothing is done by
    // asking, so the dispatch may retry it on a transient failure like any read.
    tool: { ...tool, side_effect: "read" },
    request: {
      method: "GET",
      target: upstreamTarget(path),
      headers: { accept: "application/json", "x-request-id": callId },
      body: null,
    },
  };
}

/** The dispatch's outcome once the stored answer was read: the recovered success, or the lost one as it was. */
export function withRecoveredAnswer(lost: Execution, recovered: Execution): Execution {
  // The read checks the effect; it is not another attempt at it, and the trace says so.
  const attempts = [
    ...lost.attempts,
    ...recovered.attempts.map((attempt) => ({ ...attempt, purpose: "check" as const })),
  ];
  return recovered.ok ? { ...recovered, attempts } : { ...lost, attempts };
}
