import { APPROVAL_POLL_MS } from "../approvals/model";
import type { FailureSpec } from "../wire/envelope";

/**
 * What asking again about a pending approval costs. Waiting is what the agent was told to do, so a
 * patient poll is free; a poll loop faster than the hint it was given is not waiting but calling,
 * and pays as a call (seed 000's budget: every call the run makes counts), so an eager loop spends
 * the run's calls instead of riding free on its rate limit.
 *
 * Free: a poll that waits for the decision at the proxy (`Prefer: wait`, an MCP call with a
 * progress token; MCP tasks poll `tasks/get`, which is no call at all), and a poll that keeps the
 * hint's pace: the k-th poll of an approval comes at least k × `retry_after_ms` after the approval
 * was asked for, and k is at most FREE_POLLS_PER_APPROVAL. Anything else is charged as a call.
 */

/** Patient polls of one approval that cost nothing: five minutes at the hint's pace; then `Prefer: wait`. */
export const FREE_POLLS_PER_APPROVAL = 10;

export type PollPrice = { charged: false } | { charged: true; why: string };

export function pollPrice(input: {
  /** Polls of this approval before this one. */
  polls_before: number;
  /** When the approval was asked for, ms since the epoch. */
  asked_at: number;
  now: number;
  /** Whether the call waits for the decision at the proxy (`Prefer: wait`). */
  waits: boolean;
  /** The wait's retry hint: what the agent was told to wait between asks. */
  hint_ms?: number;
}): PollPrice {
  if (input.waits) return { charged: false };
  const ordinal = input.polls_before + 1;
  const hint = input.hint_ms ?? APPROVAL_POLL_MS;
  if (ordinal > FREE_POLLS_PER_APPROVAL) {
    return {
      charged: true,
      why: `past the ${FREE_POLLS_PER_APPROVAL} free polls of an approval`,
    };
  }
  if (input.now - input.asked_at < ordinal * hint) {
    return { charged: true, why: `sooner than its retry_after_ms of ${hint} ms` };
  }
  return { charged: false };
}

/** A charged poll with the run's calls spent: refused, telling the agent how to wait for free. */
export function chargedPollRefusal(maxCalls: number, why: string): FailureSpec {
  return {
    code: "budget_exhausted",
    message: `The run used all ${maxCalls} tool calls it was given (max_calls), and this poll, ${why}, is charged as one. Ask again after retry_after_ms, which is free, or wait for the decision with Prefer: wait.`,
    retry_after_ms: APPROVAL_POLL_MS,
    details: { limit: "max_calls" },
  };
}
