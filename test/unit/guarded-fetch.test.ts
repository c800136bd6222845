import { afterEach, describe, expect, it, vi } from "vitest";
import { guardedFetch } from "../../src/egress/guarded-fetch";

const LIMITS = { max_redirects: 3, max_bytes: 1024, timeout_ms: 5_000 };

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("the egress guard's time cap", () => {
  it("aborts an exchange that has not finished by its cap, whatever the target is doing", async () => {
    vi.useFakeTimers();
    const signals: AbortSignal[] = [];
    // A target that accepts the connection and never answers.
    vi.stubGlobal(
      "fetch",
      (_url: URL, init: RequestInit) =>
        new Promise<Response>((_resolve, reject) => {
          const signal = init.signal as AbortSignal;
          signals.push(signal);
          signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
        }),
    );
    const answer = guardedFetch("https://slow.example/doc.json", {}, { limits: LIMITS, ownHosts: [] });
    await vi.advanceTimersByTimeAsync(4_999);
    expect(signals[0]?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await answer).toEqual({ ok: false, failure: { reason: "timed_out" } });
  });

  it("counts the time of every hop and the body against one cap", async () => {
    vi.useFakeTimers();
    let calls = 0;
    vi.stubGlobal("fetch", (_url: URL, init: RequestInit) => {
      calls += 1;
      const signal = init.signal as AbortSignal;
      return new Promise<Response>((resolve, reject) => {
        signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
        // Each hop answers a redirect after 2 s.
        setTimeout(
          () =>
            resolve(
              new Response(null, { status: 302, headers: { location: `https://slow.example/${calls}` } }),
            ),
          2_000,
        );
      });
    });
    const answer = guardedFetch("https://slow.example/doc.json", {}, { limits: LIMITS, ownHosts: [] });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await answer).toEqual({ ok: false, failure: { reason: "timed_out" } });
    expect(calls).toBe(3);
  });
});
