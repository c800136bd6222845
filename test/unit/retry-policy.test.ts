import { describe, expect, it } from "vitest";
import { dispatchBudgetMs, MAX_RETRY_DELAY_MS, TIMEOUT_RULE } from "../../src/catalog/timeout-rules";
import { decideRetry, MAX_UPSTREAM_ATTEMPTS, type RetryInput } from "../../src/upstream/retry";

const read: RetryInput = {
  sideEffect: "read",
  transient: true,
  attempts: 1,
  elapsedMs: 50,
  budgetMs: dispatchBudgetMs({ side_effect: "read", timeout_ms: TIMEOUT_RULE.readMinMs }),
  retryAfterMs: null,
  random: 0.5,
};

describe("retry policy by side effect", () => {
  it("retries a transient read with jittered exponential backoff", () => {
    expect(decideRetry(read)).toEqual({ retry: true, delayMs: 50 });
    expect(decideRetry({ ...read, attempts: 2 })).toEqual({ retry: true, delayMs: 100 });
    expect(decideRetry({ ...read, random: 0 })).toEqual({ retry: true, delayMs: 0 });
  });

  it("retries a read whose attempt timed out at its full per-attempt timeout", () => {
    expect(decideRetry({ ...read, elapsedMs: TIMEOUT_RULE.readMinMs }).retry).toBe(true);
    expect(decideRetry({ ...read, attempts: 2, elapsedMs: 2 * TIMEOUT_RULE.readMinMs + 100 }).retry).toBe(
      true,
    );
  });

  it("never retries drafts, writes or destructive calls blindly", () => {
    expect(decideRetry({ ...read, sideEffect: "draft" }).retry).toBe(false);
    expect(decideRetry({ ...read, sideEffect: "write" }).retry).toBe(false);
    expect(decideRetry({ ...read, sideEffect: "destructive" }).retry).toBe(false);
  });

  it("does not retry what will not change", () => {
    expect(decideRetry({ ...read, transient: false }).retry).toBe(false);
  });

  it("caps upstream attempts per call", () => {
    expect(decideRetry({ ...read, attempts: MAX_UPSTREAM_ATTEMPTS }).retry).toBe(false);
  });

  it("honours a Retry-After up to the longest wait, and refuses a longer one", () => {
    expect(decideRetry({ ...read, retryAfterMs: MAX_RETRY_DELAY_MS })).toEqual({
      retry: true,
      delayMs: MAX_RETRY_DELAY_MS,
    });
    expect(decideRetry({ ...read, retryAfterMs: MAX_RETRY_DELAY_MS + 1 }).retry).toBe(false);
  });

  it("gives up when the next attempt would overrun the budget (the run's deadline cuts it)", () => {
    // The run's deadline is 1 s away: a wait and an attempt no longer fit.
    expect(decideRetry({ ...read, budgetMs: 1_000, elapsedMs: 900 }).retry).toBe(false);
    expect(decideRetry({ ...read, elapsedMs: read.budgetMs - 100 }).retry).toBe(false);
  });

  it("gives a read a budget of every attempt at its timeout plus the waits between them", () => {
    expect(dispatchBudgetMs({ side_effect: "read", timeout_ms: 10_000 })).toBe(
      MAX_UPSTREAM_ATTEMPTS * 10_000 + (MAX_UPSTREAM_ATTEMPTS - 1) * MAX_RETRY_DELAY_MS,
    );
    expect(dispatchBudgetMs({ side_effect: "write", timeout_ms: 5_000 })).toBe(5_000);
    expect(dispatchBudgetMs({ side_effect: "destructive", timeout_ms: 8_000 })).toBe(8_000);
  });
});
