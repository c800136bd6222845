import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { type LeaseAnswer, LeaseBucket, type LeaseRequest } from "../ratelimit/lease-bucket";
import { admit, type BucketLimit, fullBuckets, type RateRefusal } from "../ratelimit/token-bucket";

/** Full buckets are swept after this many admissions, so a tenant's many finished runs cost nothing. */
const SWEEP_EVERY = 256;

/**
 * One per tenant: the tenant-wide token buckets (tool calls across all its runs, run opening).
 * Being one object per tenant is the isolation: a tenant that floods the proxy queues on its own
 * limiter and never on another tenant's. Tool calls do not come here one by one: each run's ledger
 * leases a few tokens at a time (`lease`) and spends them locally, so this object sees one request
 * per lease, not per call (see run-gate.ts); the leases it has granted are in memory with their
 * bucket, and one whose run never reports back counts as spent when its term ends.
 *
 * The buckets live in memory, not in SQLite. Admission then needs no storage write (no output-gate
 * wait, no billed row per request), and nothing is lost that matters: the object is evicted only
 * after more than a minute of silence, when every bucket of a window of at most 60 s is full again.
 * A restart mid-window (deploy, crash) forgets at most one window's worth of spending.
 */
export class RateLimiter extends DurableObject<Env> {
  readonly #tats = new Map<string, number>();
  /** Buckets whose tokens runs lease (tool calls across the tenant's runs), with their live leases. */
  readonly #leased = new Map<string, LeaseBucket>();
  #sinceSweep = 0;

  /**
   * Takes one token from each bucket in `limits`, or none if any is empty. Synchronous inside the
   * object, so concurrent requests of a tenant can never both take the last token.
   */
  admit(limits: BucketLimit[]): { ok: true } | RateRefusal {
    const now = Date.now();
    if (++this.#sinceSweep >= SWEEP_EVERY) this.#sweep(now);
    const admission = admit(this.#tats, limits, now);
    if (!admission.ok) return admission;
    for (const [key, tat] of admission.tats) this.#tats.set(key, tat);
    return { ok: true };
  }

  /**
   * Takes a run's report of its previous lease of one bucket (its unused tokens come back) and
   * grants it up to `request.want` more (see lease-bucket.ts). Synchronous, so concurrent leases
   * never share a token.
   */
  lease(limit: BucketLimit, request: LeaseRequest): LeaseAnswer {
    const now = Date.now();
    if (++this.#sinceSweep >= SWEEP_EVERY) this.#sweep(now);
    let bucket = this.#leased.get(limit.key);
    if (!bucket) {
      bucket = new LeaseBucket(limit, now, crypto.randomUUID());
      this.#leased.set(limit.key, bucket);
    }
    return bucket.lease(limit, request, now);
  }

  /** Tokens of a leased bucket a lease could take now, and tokens its live leases hold. */
  standing(limit: BucketLimit): { available: number; held: number } {
    return this.#leased.get(limit.key)?.standing(Date.now()) ?? { available: limit.limit, held: 0 };
  }

  #sweep(now: number): void {
    this.#sinceSweep = 0;
    for (const key of fullBuckets(this.#tats, now)) this.#tats.delete(key);
    for (const [key, bucket] of this.#leased) if (bucket.idle(now)) this.#leased.delete(key);
  }
}
