import type { RateLimitSettings } from "../config/rate-settings";
import type { Env } from "../env";
import type { FailureSpec } from "../wire/envelope";
import { bucketOf, limiterOf, limiterUnavailable, rateRefusal, rateSettingsOf } from "./admission";
import { type BucketLimit, takeToken } from "./token-bucket";

/** Where a run's ledger leases tenant-wide tokens from: the tenant's RateLimiter object. */
export interface LeaseSource {
  lease(
    limit: BucketLimit,
    want: number,
    unused: number,
  ): Promise<{ granted: number; retry_after_ms: number }>;
}

/** The most tokens one lease takes: enough that a busy run asks rarely, few enough to strand little. */
export const MAX_LEASE = 32;

/**
 * Tokens per lease for a tenant limit: about 1 % of it, between 1 and MAX_LEASE. A tight limit
 * (a handful per window) leases one at a time and so is exact.
 */
export function leaseSize(limit: number): number {
  return Math.max(1, Math.min(MAX_LEASE, Math.floor(limit / 100)));
}

/**
 * A run's rate limits, kept by its ledger (the run's single writer), so a tool call reaches no
 * other object:
 *
 * - the run's own bucket (`calls_per_run`) lives here, in memory, like every bucket of the tenant
 *   limiter did (a restart forgets at most one window's spending);
 * - the tenant-wide bucket (`calls_per_tenant`) stays in the tenant's RateLimiter, which this gate
 *   leases a few tokens from at a time and spends locally. The tenant object then sees one request
 *   per lease instead of one per call, so it no longer caps a tenant's fleet at one object's
 *   throughput, and most calls pay no round trip to wherever it lives.
 *
 * Accuracy: a tenant never makes more calls than its limit (every call spends a token taken from
 * the tenant's bucket), but it can be refused early by up to `leaseSize - 1` tokens per run that
 * holds a partly used lease. Unused tokens go back to the tenant's bucket when the lease is renewed
 * after it expires (one window).
 */
export class RunRateGate {
  readonly #runId: string;
  readonly #settings: () => RateLimitSettings;
  readonly #source: () => LeaseSource;
  #runTat: number | undefined;
  #tokens = 0;
  #leaseExpiresAt = 0;
  #leasing: Promise<FailureSpec | null> | null = null;

  constructor(runId: string, settings: () => RateLimitSettings, source: () => LeaseSource) {
    this.#runId = runId;
    this.#settings = settings;
    this.#source = source;
  }

  /** One call's tokens from the run's bucket and the tenant's, or the refusal; both or neither. */
  async take(): Promise<FailureSpec | null> {
    const settings = this.#settings();
    const run = bucketOf("run_calls", settings, this.#runId);
    // Refused by its own run, a call never spends (or leases) a tenant token.
    const early = takeToken(this.#runTat, run, Date.now());
    if (!early.ok) return rateRefusal("run_calls", settings, early.retry_after_ms);
    while (!this.#hasToken(Date.now())) {
      const renewed = await this.#renew(settings);
      if (renewed) return renewed;
    }
    // Checked again: other calls of the run may have spent its bucket while this one waited.
    const verdict = takeToken(this.#runTat, run, Date.now());
    if (!verdict.ok) return rateRefusal("run_calls", settings, verdict.retry_after_ms);
    this.#runTat = verdict.tat;
    this.#tokens--;
    return null;
  }

  #hasToken(now: number): boolean {
    return this.#tokens > 0 && now < this.#leaseExpiresAt;
  }

  /** One lease at a time per run: concurrent calls wait for the same one. */
  #renew(settings: RateLimitSettings): Promise<FailureSpec | null> {
    if (!this.#leasing) {
      this.#leasing = this.#lease(settings).finally(() => {
        this.#leasing = null;
      });
    }
    return this.#leasing;
  }

  async #lease(settings: RateLimitSettings): Promise<FailureSpec | null> {
    const tenant = bucketOf("tenant_calls", settings);
    const unused = this.#tokens;
    this.#tokens = 0;
    let answer: { granted: number; retry_after_ms: number };
    try {
      answer = await this.#source().lease(tenant, leaseSize(tenant.limit), unused);
    } catch (error) {
      return limiterUnavailable(error);
    }
    if (answer.granted === 0) return rateRefusal("tenant_calls", settings, answer.retry_after_ms);
    this.#tokens = answer.granted;
    this.#leaseExpiresAt = Date.now() + tenant.window_ms;
    return null;
  }
}

/** The gate of one run of a tenant: its own bucket, and its lease of the tenant's from the tenant's RateLimiter. */
export function runRateGate(env: Env, run: { run_id: string; tenant: string }): RunRateGate {
  return new RunRateGate(
    run.run_id,
    () => rateSettingsOf(env, run.tenant),
    () => limiterOf(env, run.tenant),
  );
}
