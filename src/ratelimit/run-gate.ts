import type { RateLimitSettings } from "../config/rate-settings";
import type { Env } from "../env";
import type { FailureSpec } from "../wire/envelope";
import { bucketOf, limiterOf, limiterUnavailable, rateRefusal, rateSettingsOf } from "./admission";
import type { LeaseAnswer, LeaseRequest } from "./lease-bucket";
import { type BucketLimit, takeToken } from "./token-bucket";

/** Where a run's ledger leases tenant-wide tokens from: the tenant's RateLimiter object. */
export interface LeaseSource {
  lease(limit: BucketLimit, request: LeaseRequest): Promise<LeaseAnswer>;
}

/** The most tokens one lease takes: enough that a busy run asks rarely, few enough to strand little. */
export const MAX_LEASE = 32;

/**
 * A run that spends a whole lease within this share of its term gets twice as many next time: a
 * steady run grows its lease until one lasts about a term, so it asks the tenant's object about once
 * a term and holds about one term's worth of its own calls.
 */
export const GROW_WITHIN_TERM = 0.5;

/**
 * A lease is spent only until this long before its term ends, so clocks a little apart never spend
 * a token the bucket has already counted back.
 */
const TERM_MARGIN_MS = 250;

/**
 * The most tokens per lease for a tenant limit: about 1 % of it, between 1 and MAX_LEASE. A tight
 * limit (under 200 per window) leases one at a time.
 */
export function leaseSize(limit: number): number {
  return Math.max(1, Math.min(MAX_LEASE, Math.floor(limit / 100)));
}

/**
 * The size of a run's next lease, from how its last one went: a lease spent within
 * GROW_WITHIN_TERM of its term doubles; one whose term ended with tokens left shrinks to what the
 * run spent in it (at least 1); otherwise it stays. Never more than `leaseSize` of the limit.
 */
export function nextLeaseSize(
  size: number,
  last: { granted: number; unused: number; held_ms: number; term_ms: number; expired: boolean },
  cap: number,
): number {
  let next = size;
  if (last.unused === 0 && last.held_ms <= last.term_ms * GROW_WITHIN_TERM) next = size * 2;
  else if (last.expired && last.unused > 0) next = Math.max(1, last.granted - last.unused);
  return Math.max(1, Math.min(cap, next));
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
 *   throughput, and most calls of a busy run pay no round trip to wherever it lives.
 *
 * A run's first lease is one token; each lease spent within GROW_WITHIN_TERM of its term doubles the next, up to
 * `leaseSize` of the limit, so a run that makes one call holds one token. Unused tokens go back
 * with the next lease request, at the run's end (`release`), or, if the run never says (its object
 * was evicted), when the lease's term passes at the bucket (lease-bucket.ts).
 *
 * Accuracy: a tenant never makes more calls than its limit allows (every call spends a token taken
 * from the tenant's bucket within the lease's term), but it can be refused early by the tokens other
 * runs hold in live leases (see lease-bucket.ts).
 */
export class RunRateGate {
  readonly #runId: string;
  readonly #settings: () => RateLimitSettings;
  readonly #source: () => LeaseSource;
  readonly #clock: () => number;
  #runTat: number | undefined;
  /** The live lease: its id, tokens left, tokens granted, when it was asked for and until when it may be spent. */
  #lease: string | null = null;
  #tokens = 0;
  #granted = 0;
  #leasedAt = 0;
  #leaseExpiresAt = 0;
  /** The live lease's term as the tenant's object granted it. */
  #term = 0;
  /** Tokens the next lease asks for. */
  #size = 1;
  #leasing: Promise<FailureSpec | null> | null = null;

  constructor(
    runId: string,
    settings: () => RateLimitSettings,
    source: () => LeaseSource,
    clock: () => number = Date.now,
  ) {
    this.#runId = runId;
    this.#settings = settings;
    this.#source = source;
    this.#clock = clock;
  }

  /** One call's tokens from the run's bucket and the tenant's, or the refusal; both or neither. */
  async take(): Promise<FailureSpec | null> {
    const settings = this.#settings();
    const run = bucketOf("run_calls", settings, this.#runId);
    // Refused by its own run, a call never spends (or leases) a tenant token.
    const early = takeToken(this.#runTat, run, this.#clock());
    if (!early.ok) return rateRefusal("run_calls", settings, early.retry_after_ms);
    while (!this.#hasToken(this.#clock())) {
      const renewed = await this.#renew(settings);
      if (renewed) return renewed;
    }
    // Checked again: other calls of the run may have spent its bucket while this one waited.
    const verdict = takeToken(this.#runTat, run, this.#clock());
    if (!verdict.ok) return rateRefusal("run_calls", settings, verdict.retry_after_ms);
    this.#runTat = verdict.tat;
    this.#tokens--;
    return null;
  }

  /**
   * Gives the live lease back (the run ended): its unused tokens return to the tenant's bucket and
   * its spent ones stop being held. Later calls, if any, lease afresh.
   */
  async release(): Promise<void> {
    if (this.#leasing) await this.#leasing.catch(() => null);
    const lease = this.#lease;
    if (lease === null) return;
    const unused = this.#tokens;
    this.#lease = null;
    this.#tokens = 0;
    const tenant = bucketOf("tenant_calls", this.#settings());
    await this.#source().lease(tenant, { holder: this.#runId, lease, unused, want: 0 });
  }

  #hasToken(now: number): boolean {
    return this.#tokens > 0 && now < this.#leaseExpiresAt;
  }

  /** One lease at a time per run: concurrent calls wait for the same one. */
  #renew(settings: RateLimitSettings): Promise<FailureSpec | null> {
    if (!this.#leasing) {
      this.#leasing = this.#leaseMore(settings).finally(() => {
        this.#leasing = null;
      });
    }
    return this.#leasing;
  }

  async #leaseMore(settings: RateLimitSettings): Promise<FailureSpec | null> {
    const tenant = bucketOf("tenant_calls", settings);
    const sentAt = this.#clock();
    const previous = this.#lease;
    const expired = sentAt >= this.#leaseExpiresAt;
    const unused = this.#tokens;
    if (previous !== null) {
      this.#size = nextLeaseSize(
        this.#size,
        { granted: this.#granted, unused, held_ms: sentAt - this.#leasedAt, term_ms: this.#term, expired },
        leaseSize(tenant.limit),
      );
    }
    this.#size = Math.min(this.#size, leaseSize(tenant.limit));
    this.#lease = null;
    this.#tokens = 0;
    let answer: LeaseAnswer;
    try {
      answer = await this.#source().lease(tenant, {
        holder: this.#runId,
        lease: previous,
        // Tokens left after the run's own cutoff go back too: it will not spend them now.
        unused,
        want: this.#size,
      });
    } catch (error) {
      return limiterUnavailable(error);
    }
    if (answer.granted === 0 || answer.lease === null) {
      return rateRefusal("tenant_calls", settings, answer.retry_after_ms);
    }
    this.#lease = answer.lease;
    this.#tokens = answer.granted;
    this.#granted = answer.granted;
    this.#leasedAt = sentAt;
    this.#term = answer.term_ms;
    this.#leaseExpiresAt = sentAt + answer.term_ms - Math.min(TERM_MARGIN_MS, answer.term_ms / 4);
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
