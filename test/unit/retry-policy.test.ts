import { describe, expect, it } from "vitest";
import { decideRetry, MAX_UPSTREAM_ATTEMPTS, type RetryInput } from "../../src/upstream/retry";

const read: RetryInput = {
  sideEffect: "read",
  transient: true,
  attempts: 1,
  elapsedMs: 50,
  timeoutMs: 2_500,
  retryAfterMs: null,
  random: 0.5,
};

describe("retry policy by side effect", () => {
  it("retries a transient read with jittered exponential backoff", () => {
    expect(decideRetry(read)).toEqual({ retry: true, delayMs: 50 });
    expect(decideRetry({ ...read, attempts: 2 })).toEqual({ retry: true, delayMs: 100 });
    expect(decideRetry({ ...read, random: 0 })).toEqual({ retry: true, delayMs: 0 });
  });

  it("never retries writes or destructive calls blindly", () => {
    expect(decideRetry({ ...read, sideEffect: "write" }).retry).toBe(false);
    expect(decideRetry({ ...read, sideEffect: "destructive" }).retry).toBe(false);
  });

  it("does not retry what will not change", () => {
    expect(decideRetry({ ...read, transient: false }).retry).toBe(false);
  });

  it("caps upstream attempts per call", () => {
    expect(decideRetry({ ...read, attempts: MAX_UPSTREAM_ATTEMPTS }).retry).toBe(false);
  });

  it("honours Retry-After, and gives up when it would overrun the tool's timeout", () => {
    expect(decideRetry({ ...read, retryAfterMs: 1_000 })).toEqual({ retry: true, delayMs: 1_000 });
    expect(decideRetry({ ...read, retryAfterMs: 5_000 }).retry).toBe(false);
    expect(decideRetry({ ...read, elapsedMs: 2_400 }).retry).toBe(false);
  });
});
