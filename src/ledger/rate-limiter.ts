import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import {
  admit,
  type BucketLimit,
  fullBuckets,
  type RateRefusal,
  returnTokens,
  takeTokens,
} from "../ratelimit/token-bucket";

/** Full buckets are swept after this many admissions, so a tenant's many finished runs cost nothing. */
const SWEEP_EVERY = 256;

/**
 * One per tenant: the tenant-wide token buckets (tool calls across all its runs, run opening).
 * Being one object per tenant is the isolation: a tenant that floods the proxy queues on its own
 * limiter and never on another tenant's. Tool calls do not come here one by one: each run's ledger
 * leases a few tokens at a time (`lease`) and spends them locally, so this object sees one request
 * per lease, not per call (see run-gate.ts).
 *
 * The buckets live in memory, not in SQLite. Admission then needs no storage write (no output-gate
 * wait, no billed row per request), and nothing is lost that matters: the object is evicted only
 * after more than a minute of silence, when every bucket of a window of at most 60 s is full again.
 * A restart mid-window (deploy, crash) forgets at most one window's worth of spending.
 */
export class RateLimiter extends DurableObject<Env> {
  readonly #tats = new Map<string, number>();
  #sinceSweep = 0;

  /**
   * Takes one token from each bucket in `limits`, or none if any is empty. Synchronous inside the
   * object, so concurrent requests of a tenant can never both take the last token.
   */
  admit(limits: BucketLimit[]): { ok: true } | RateRefusal {
    const now = Date.now();
    if (++this.#sinceSweep >= SWEEP_EVERY) {
      this.#sinceSweep = 0;
      for (const key of fullBuckets(this.#tats, now)) this.#tats.delete(key);
    }
    const admission = admit(this.#tats, limits, now);
    if (!admission.ok) return admission;
    for (const [key, tat] of admission.tats) this.#tats.set(key, tat);
    return { ok: true };
  }

  /**
   * Grants up to `want` tokens of one bucket to a run's ledger, after taking back the `unused`
   * tokens of its previous lease. Synchronous, so concurrent leases never share a token.
   */
  lease(limit: BucketLimit, want: number, unused: number): { granted: number; retry_after_ms: number } {
    const now = Date.now();
    const returned = returnTokens(this.#tats.get(limit.key), limit, now, unused);
    const grant = takeTokens(returned, limit, now, Math.max(1, Math.floor(want)));
    if (grant.tat !== undefined) this.#tats.set(limit.key, grant.tat);
    return { granted: grant.granted, retry_after_ms: grant.retry_after_ms };
  }
}
