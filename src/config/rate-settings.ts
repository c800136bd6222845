import * as z from "zod";
import { lazily } from "../core/lazily";

/** The limits of a tenant that configures none: generous for an agent, tight for a runaway loop. */
export const DEFAULT_RATE_LIMITS = Object.freeze({
  window_s: 60,
  calls_per_tenant: 1_200,
  calls_per_run: 120,
  runs_opened: 120,
});

/**
 * A tenant's request-rate limits. Each is a token bucket: at most `limit` requests at once, refilled
 * evenly over `window_s`, so the long-run rate is `limit` per window. A refused call is no dispatch
 * and spends nothing; run budgets (max_calls, deadline) remain the limit on what a run spends.
 *
 * The window is at most 60 s because the counters live in memory (the tenant's RateLimiter, each
 * run's ledger: see run-gate.ts): a Durable Object is only evicted after more than a minute without
 * requests, by which time every bucket of a window of 60 s or less is full again, so eviction never
 * forgets a drained bucket.
 *
 * Built on first use: the `TENANTS` a deploy ships is parsed when it is compiled (`tenants.ts`).
 */
export const rateLimitSettingsSchema = lazily(() =>
  z.strictObject({
    window_s: z
      .number()
      .int()
      .min(1)
      .max(60)
      .default(DEFAULT_RATE_LIMITS.window_s)
      .describe("The window, in seconds, over which each limit refills."),
    calls_per_tenant: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(DEFAULT_RATE_LIMITS.calls_per_tenant)
      .describe("Tool calls per window across all of the tenant's runs."),
    calls_per_run: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(DEFAULT_RATE_LIMITS.calls_per_run)
      .describe("Tool calls per window within one run."),
    runs_opened: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(DEFAULT_RATE_LIMITS.runs_opened)
      .describe("Runs the tenant may open per window."),
  }),
);
export type RateLimitSettings = z.infer<ReturnType<typeof rateLimitSettingsSchema>>;
