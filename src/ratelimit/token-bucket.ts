/**
 * Token buckets in their GCRA form: a bucket is one number, its "theoretical arrival time" (TAT),
 * the moment at which it would be full again. A bucket that is absent or whose TAT has passed is
 * full. One number per bucket makes the state cheap to keep for every run of a tenant, and the
 * refusal says exactly when the next request will be admitted.
 *
 * Everything here is pure: the caller owns the state and the clock.
 */

/** At most `limit` requests at once; one token comes back every `window_ms / limit`. */
export interface BucketLimit {
  key: string;
  limit: number;
  window_ms: number;
}

export type BucketVerdict = { ok: true; tat: number } | { ok: false; retry_after_ms: number };

export type Admission = { ok: true; tats: Array<[key: string, tat: number]> } | RateRefusal;
export interface RateRefusal {
  ok: false;
  /** The bucket that refused; the one that stays empty longest when several do. */
  key: string;
  retry_after_ms: number;
}

/**
 * Sums of fractional intervals drift by a few ulps; without this slack the `limit`-th request of a
 * burst could be refused for being 1e-9 ms early.
 */
const CLOCK_SLACK_MS = 0.001;

/** Whether one more request fits in a bucket whose state is `tat` (undefined: never used). */
export function takeToken(tat: number | undefined, limit: BucketLimit, now: number): BucketVerdict {
  const interval = limit.window_ms / limit.limit;
  const next = Math.max(tat ?? now, now) + interval;
  const admitAt = next - limit.window_ms;
  if (admitAt - now > CLOCK_SLACK_MS) return { ok: false, retry_after_ms: Math.ceil(admitAt - now) };
  return { ok: true, tat: next };
}

/**
 * Takes one token from every bucket, or from none: a call refused by its run's bucket must not
 * spend the tenant's, and the other way round.
 */
export function admit(
  state: ReadonlyMap<string, number>,
  limits: readonly BucketLimit[],
  now: number,
): Admission {
  const tats: Array<[string, number]> = [];
  let refusal: RateRefusal | null = null;
  for (const limit of limits) {
    const verdict = takeToken(state.get(limit.key), limit, now);
    if (verdict.ok) tats.push([limit.key, verdict.tat]);
    else if (!refusal || verdict.retry_after_ms > refusal.retry_after_ms)
      refusal = { ok: false, key: limit.key, retry_after_ms: verdict.retry_after_ms };
  }
  return refusal ?? { ok: true, tats };
}

/** Buckets that are full again carry no information; dropping them keeps the state bounded. */
export function fullBuckets(state: ReadonlyMap<string, number>, now: number): string[] {
  const full: string[] = [];
  for (const [key, tat] of state) if (tat <= now) full.push(key);
  return full;
}
