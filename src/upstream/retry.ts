import type { SideEffect } from "../catalog/define-tool";
import { MAX_RETRY_DELAY_MS, MAX_UPSTREAM_ATTEMPTS } from "../catalog/timeout-rules";

export { MAX_UPSTREAM_ATTEMPTS } from "../catalog/timeout-rules";

const BASE_DELAY_MS = 100;
/** Don't start an attempt with less time than this left: it could only time out. */
export const MIN_ATTEMPT_MS = 200;

export interface RetryInput {
  sideEffect: SideEffect;
  transient: boolean;
  /** Attempts made so far, counting the one that just failed. */
  attempts: number;
  elapsedMs: number;
  /**
   * The time the whole dispatch may take from its start: the read's dispatch budget
   * (`dispatchBudgetMs`), cut to what is left of the run's deadline.
   */
  budgetMs: number;
  retryAfterMs: number | null;
  /** A number in [0, 1): injected so the decision is pure and testable. */
  random: number;
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: string };

/**
 * Whether the proxy itself tries the upstream again, and after how long.
 * Only reads are retried: a write is resent solely when the agent repeats the call, with the
 * same key, because the proxy cannot know whether the first attempt acted.
 */
export function decideRetry(input: RetryInput): RetryDecision {
  // Drafts, writes and destructive calls may have acted; a blind resend is exactly the bug this proxy
  // exists to stop. A draft is not a read: it stores a draft upstream, so a resend after a timeout
  // could store a second one. Like a write it carries a key and is resent only when the agent repeats it.
  if (input.sideEffect !== "read") return { retry: false, reason: "writes are never retried blindly" };
  // A 4xx, a malformed body or a success will not change by asking again.
  if (!input.transient) return { retry: false, reason: "not transient" };
  if (input.attempts >= MAX_UPSTREAM_ATTEMPTS) return { retry: false, reason: "attempt cap reached" };
  // Full jitter keeps many agents hitting one upstream from retrying in lockstep.
  const backoff = Math.floor(
    input.random * Math.min(MAX_RETRY_DELAY_MS, BASE_DELAY_MS * 2 ** (input.attempts - 1)),
  );
  // The upstream said when it will be ready: earlier is pointless, later wastes the budget.
  const delayMs = input.retryAfterMs ?? backoff;
  if (delayMs > MAX_RETRY_DELAY_MS) return { retry: false, reason: "the upstream asks for a longer wait" };
  if (input.elapsedMs + delayMs + MIN_ATTEMPT_MS > input.budgetMs) {
    return { retry: false, reason: "no time left in the read's budget or the run's deadline" };
  }
  return { retry: true, delayMs };
}
