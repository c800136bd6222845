import type { SideEffect } from "./define-tool";

/**
 * How long an upstream call may take, by side-effect class.
 *
 * - A **read** changes nothing, so it gets the relaxed treatment: each attempt may take its
 *   `timeout_ms` (at least `readMinMs`), and a transient failure (timeout, network error, 429,
 *   5xx) is tried again, up to `MAX_UPSTREAM_ATTEMPTS` attempts in all, with jittered exponential
 *   backoff; every attempt and wait stays within the read's dispatch budget and the run's deadline.
 * - A **draft, write or destructive** call may have acted when it times out, so it keeps a strict
 *   `timeout_ms` (at most `keyedMaxMs`) for its one attempt and is never retried blindly: it is
 *   resent only when the agent repeats the call, with the same key and the stored bytes.
 */
export interface TimeoutRule {
  /** Least per-attempt timeout of a read that goes upstream. */
  readMinMs: number;
  /** Most a draft, write or destructive call may wait for its one attempt. */
  keyedMaxMs: number;
}

/** The rule of the product's catalog (`npm run tools -- check` and the proxy's catalog load). */
export const TIMEOUT_RULE: TimeoutRule = { readMinMs: 10_000, keyedMaxMs: 10_000 };

/** Attempts a read may make in one dispatch; every other class makes one. */
export const MAX_UPSTREAM_ATTEMPTS = 3;
/** The longest wait between two attempts of a read (the backoff's cap; a longer Retry-After is refused). */
export const MAX_RETRY_DELAY_MS = 1_000;

/** The attempts a tool's dispatch may make. */
export function attemptsOf(sideEffect: SideEffect): number {
  return sideEffect === "read" ? MAX_UPSTREAM_ATTEMPTS : 1;
}

/**
 * The longest one dispatch of the tool may take, every attempt and wait included: a read's attempts
 * and the waits between them, a keyed call's one attempt. The run's deadline bounds it further.
 */
export function dispatchBudgetMs(tool: { side_effect: SideEffect; timeout_ms: number }): number {
  const attempts = attemptsOf(tool.side_effect);
  return attempts * tool.timeout_ms + (attempts - 1) * MAX_RETRY_DELAY_MS;
}

/** What breaks the rule for one tool's timeout, or null; the message says what is allowed. */
export function timeoutProblem(
  name: string,
  sideEffect: SideEffect,
  timeoutMs: number,
  rule: TimeoutRule,
): string | null {
  if (sideEffect === "read") {
    return timeoutMs < rule.readMinMs
      ? `tool "${name}": a read's timeout_ms must be at least ${rule.readMinMs} (reads get a relaxed timeout per attempt and up to ${MAX_UPSTREAM_ATTEMPTS} attempts within the run's deadline); got ${timeoutMs}`
      : null;
  }
  return timeoutMs > rule.keyedMaxMs
    ? `tool "${name}": a ${sideEffect} tool's timeout_ms must be at most ${rule.keyedMaxMs} (it is never retried blindly, so its one attempt keeps a strict timeout); got ${timeoutMs}`
    : null;
}
