import type { ToolSpec } from "../catalog/define-tool";
import { dispatchBudgetMs } from "../catalog/timeout-rules";
import { exceededIn } from "../core/answer-bounds";
import type { Execution } from "../machine/request";
import type { StoredRequest } from "../machine/run-state";
import { validateOutput } from "../machine/validate";
import type { AttemptRecord } from "../wire/trace-entry";
import type { Upstream } from "./bindings";
import { type Classification, classifyUpstream, tooLarge } from "./classify";
import type { UpstreamAuthorization } from "./credential";
import { decideRetry } from "./retry";
import { sendAttempt } from "./send-attempt";

export interface ExecuteInput {
  tool: ToolSpec;
  /** The exact request, as stored under the call's key (or built for a read). */
  request: StoredRequest;
  upstream: Upstream;
  /**
   * The one header per attempt that is not part of the stored request: the credential, signed (or
   * reused) for each attempt, so it never needs to outlive more than one.
   */
  credential: () => Promise<UpstreamAuthorization>;
  /** The run's deadline (epoch ms): a read's retries end by then. */
  deadlineAt: number;
  /** The W3C `traceparent` each attempt carries (not part of the stored request); null sends none. */
  traceparent: string | null;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * When a dispatch begun at `began` must be over (epoch ms): a keyed call's one strict timeout; a
 * read's budget of attempts and waits (`dispatchBudgetMs`), never past the run's deadline.
 */
export function dispatchEnd(tool: ToolSpec, began: number, deadlineAt: number): number {
  const end = began + dispatchBudgetMs(tool);
  return tool.side_effect === "read" ? Math.min(end, deadlineAt) : end;
}

/** How long the attempt starting now may take: the tool's timeout, cut to what is left of the dispatch. */
export function attemptTimeoutMs(tool: ToolSpec, startedAt: number, end: number): number {
  return Math.max(1, Math.min(tool.timeout_ms, end - startedAt));
}

/**
 * Stage "dispatch": sends the request, retrying reads on transient failures (each attempt with the
 * read's relaxed timeout, all within its budget and the run's deadline); each answer is classified (`classify.ts`) and a success's output validated against the
 * tool's whitelist (`validateOutput`), so the final answer is data or a failure.
 */
export async function executeRequest(input: ExecuteInput): Promise<Execution> {
  const { tool, request } = input;
  const random = input.random ?? Math.random;
  const sleep = input.sleep ?? defaultSleep;
  const attempts: AttemptRecord[] = [];
  const began = Date.now();
  const end = dispatchEnd(tool, began, input.deadlineAt);

  for (;;) {
    const startedAt = Date.now();
    const result = await sendAttempt({
      upstream: input.upstream,
      request,
      credential: await input.credential(),
      traceparent: input.traceparent,
      timeoutMs: attemptTimeoutMs(tool, startedAt, end),
    });
    const classification = classifyUpstream(result, tool.side_effect);
    const status = result.kind === "response" || result.kind === "too_large" ? result.status : null;
    attempts.push(
      effectAttempt(
        attempts.length + 1,
        startedAt,
        status,
        result.kind === "timeout" || result.kind === "network_error"
          ? result.kind
          : classification.kind === "success"
            ? "success"
            : status !== null && status >= 200 && status < 300
              ? "invalid_body"
              : "http_error",
      ),
    );

    const next = afterAttempt(tool, classification, status, attempts, { began, end }, random());
    if ("retryInMs" in next) await sleep(next.retryInMs);
    else return next;
  }
}

/** One attempt of a call's effect as the trace records it, its latency measured now. */
export function effectAttempt(
  attempt: number,
  startedAt: number,
  status: number | null,
  result: AttemptRecord["result"],
): AttemptRecord {
  return {
    attempt,
    started_at: startedAt,
    latency_ms: Date.now() - startedAt,
    upstream_status: status,
    result,
    purpose: "effect",
  };
}

/**
 * What one classified attempt ends in: the call's answer (a success's output validated against the
 * tool's whitelist, or the failure with the attempts counted), or the wait before the next attempt.
 * Both dispatches (HTTP and remote MCP) end their attempts here.
 */
export function afterAttempt(
  tool: ToolSpec,
  classification: Classification,
  status: number | null,
  attempts: AttemptRecord[],
  dispatch: { began: number; end: number },
  random: number,
): Execution | { retryInMs: number } {
  if (classification.kind === "success") {
    // Walked before the whitelist or shaping recurse through it: the wire's count misses nothing
    // parsed, and an MCP tool's text blocks, joined, meet the string bound here.
    const crossed = exceededIn(classification.body);
    if (crossed) {
      const failure = tooLarge({ status: classification.status, exceeded: crossed }, tool.side_effect);
      return {
        ok: false,
        failure: { ...failure, details: { ...failure.details, attempts: attempts.length } },
        status,
        attempts,
      };
    }
    const output = validateOutput(tool, classification.body);
    return output.ok
      ? { ok: true, data: output.data, status: classification.status, attempts }
      : { ok: false, failure: output.failure, status, attempts };
  }
  const decision = decideRetry({
    sideEffect: tool.side_effect,
    transient: classification.transient,
    attempts: attempts.length,
    elapsedMs: Date.now() - dispatch.began,
    budgetMs: dispatch.end - dispatch.began,
    retryAfterMs: classification.failure.retry_after_ms ?? null,
    random,
  });
  if (decision.retry) return { retryInMs: decision.delayMs };
  return {
    ok: false,
    failure: {
      ...classification.failure,
      details: { ...classification.failure.details, attempts: attempts.length },
    },
    status,
    attempts,
  };
}
