import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { admit, type BucketLimit, fullBuckets, type RateRefusal } from "./token-bucket";

/** Full buckets are swept after this many admissions, so a tenant's many finished runs cost nothing. */
const SWEEP_EVERY = 256;

/**
 * One per tenant: the token buckets of the tenant, of each of its runs and of its run opening.
 * Being one object per tenant is the isolation: a tenant that floods the proxy queues on its own
 * limiter and never on another tenant's.
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
}
