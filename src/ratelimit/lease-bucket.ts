import type { BucketLimit } from "./token-bucket";

/**
 * A token bucket whose tokens are leased out a few at a time and spent elsewhere (by each run's
 * ledger: see run-gate.ts), with the table of its live leases.
 *
 * A leased token stays *held* until its holder reports how many of the lease it spent (when it
 * renews, or when its run ends) or the lease's term passes. The bucket's refill stops when what it
 * has plus what is held reaches the limit, so held tokens, spent or not, count against the bucket
 * exactly as tokens in it do: calls are never admitted faster than `limit` at once plus one token
 * every `window_ms / limit`. A report gives back the unused tokens at once; a lease that is never
 * reported (its holder's object was evicted or crashed) counts as spent when its term ends, and its
 * tokens come back at the refill rate from then.
 *
 * Everything here is pure: the caller owns the clock, and every method takes `now`.
 */

/** How long a lease's tokens may be spent, at most; never longer than the bucket's window. */
export const LEASE_TERM_MS = 5_000;

/** What a holder asks for: up to `want` new tokens, after reporting its previous lease, if any. */
export interface LeaseRequest {
  /** Who holds the lease (a run id): a report of a lease counts only from its holder. */
  holder: string;
  /** The previous lease being reported, or null for none. */
  lease: string | null;
  /** Tokens of the previous lease not spent: they go back to the bucket. */
  unused: number;
  /** New tokens wanted; 0 only reports (the run ended). */
  want: number;
}

export interface LeaseAnswer {
  granted: number;
  /** The new lease's id (to report it by), null when nothing was granted. */
  lease: string | null;
  /** How long the granted tokens may be spent, from when the request was sent. */
  term_ms: number;
  /** When nothing was granted: when the next token will be there. */
  retry_after_ms: number;
}

interface Lease {
  holder: string;
  tokens: number;
  expires_at: number;
}

/** Float sums of refill drift by a few ulps; a token this close to whole is whole. */
const TOKEN_SLACK = 1e-9;

export function leaseTerm(limit: BucketLimit): number {
  return Math.min(LEASE_TERM_MS, limit.window_ms);
}

export class LeaseBucket {
  #limit: BucketLimit;
  /** Tokens in the bucket (not held), fractional while refilling, as of `#at`. */
  #level: number;
  #at: number;
  /** Tokens held by live leases. */
  #held = 0;
  /** Live leases by id, in the order they were granted: with one term for all, that is expiry order. */
  readonly #leases = new Map<string, Lease>();
  /** Makes lease ids unique across this bucket's lifetimes: a report from before a restart matches nothing. */
  readonly #epoch: string;
  #seq = 0;

  constructor(limit: BucketLimit, now: number, epoch: string) {
    this.#limit = limit;
    this.#level = limit.limit;
    this.#at = now;
    this.#epoch = epoch;
  }

  /**
   * Takes the report of `request.lease` (its unused tokens come back), then grants up to
   * `request.want` tokens. Synchronous: concurrent requests never share a token.
   */
  lease(limit: BucketLimit, request: LeaseRequest, now: number): LeaseAnswer {
    this.#limit = limit;
    this.#advance(now);
    const previous = request.lease === null ? undefined : this.#leases.get(request.lease);
    // A report of a lease that has expired (counted as spent) or is unknown (a restart) changes nothing.
    if (request.lease !== null && previous?.holder === request.holder) {
      this.#leases.delete(request.lease);
      this.#held -= previous.tokens;
      this.#level += Math.min(Math.max(0, Math.floor(request.unused)), previous.tokens);
    }
    const term_ms = leaseTerm(limit);
    const want = Math.max(0, Math.floor(request.want));
    const granted = Math.min(want, Math.floor(this.#level + TOKEN_SLACK));
    if (granted <= 0) {
      return { granted: 0, lease: null, term_ms, retry_after_ms: want > 0 ? this.#nextTokenIn(now) : 0 };
    }
    this.#level = Math.max(0, this.#level - granted);
    this.#held += granted;
    const id = `${this.#epoch}.${++this.#seq}`;
    this.#leases.set(id, { holder: request.holder, tokens: granted, expires_at: now + term_ms });
    return { granted, lease: id, term_ms, retry_after_ms: 0 };
  }

  /** Tokens a lease could take now, and tokens held by live leases. */
  standing(now: number): { available: number; held: number } {
    this.#advance(now);
    return { available: Math.floor(this.#level + TOKEN_SLACK), held: this.#held };
  }

  /** Whether the bucket carries no information: full, nothing held (it may be forgotten). */
  idle(now: number): boolean {
    this.#advance(now);
    return this.#held === 0 && this.#level + TOKEN_SLACK >= this.#limit.limit;
  }

  /** Brings the bucket to `now`: leases whose term has passed count as spent, in the order they end. */
  #advance(now: number): void {
    for (const [id, lease] of this.#leases) {
      if (lease.expires_at > now) break;
      this.#refill(lease.expires_at);
      this.#held -= lease.tokens;
      this.#leases.delete(id);
    }
    this.#refill(now);
  }

  /** Refills up to `to`, never beyond the limit counting what leases hold. */
  #refill(to: number): void {
    if (to <= this.#at) return;
    const cap = this.#limit.limit - this.#held;
    const interval = this.#limit.window_ms / this.#limit.limit;
    if (this.#level < cap) this.#level = Math.min(cap, this.#level + (to - this.#at) / interval);
    this.#at = to;
  }

  /** When a whole token will be in the bucket, counting the leases that will end before then. */
  #nextTokenIn(now: number): number {
    const interval = this.#limit.window_ms / this.#limit.limit;
    let at = now;
    let level = this.#level;
    let held = this.#held;
    for (const lease of this.#leases.values()) {
      const cap = this.#limit.limit - held;
      if (cap >= 1) {
        const ready = at + (1 - level) * interval;
        if (ready <= lease.expires_at) return Math.max(1, Math.ceil(ready - now));
      }
      if (level < cap) level = Math.min(cap, level + (lease.expires_at - at) / interval);
      at = Math.max(at, lease.expires_at);
      held -= lease.tokens;
    }
    return Math.max(1, Math.ceil(at + (1 - level) * interval - now));
  }
}
