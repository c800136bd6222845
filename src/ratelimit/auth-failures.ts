import { sha256Hex } from "../core/digest";
import type { Env } from "../env";

/**
 * Failed authentications (a wrong key typed into the console's sign-in form, an unknown bearer on
 * the operator API) are counted per source address and per key prefix, and past the limit refused
 * with the time the next attempt is allowed.
 *
 * Failures have no tenant yet, so they cannot be counted in a tenant's limiter: each source address
 * has its own `RateLimiter` object (`auth-failures:source:<address>`), and so does each key prefix
 * (`auth-failures:key:<digest of the prefix>`, so no key material names an object). In-isolate
 * memory alone would not do, since a guesser's requests land in many isolates.
 *
 * Only failures are counted. A success pays nothing, unless this isolate has seen its source over
 * the limit: that source is then refused without its key being checked, until the limiter's own
 * wait is over (the bucket cannot refill sooner, so the memory never refuses what the limiter would
 * admit). An over-limit key prefix is remembered the same way, but only refuses failures: a correct
 * key is never locked out by what others typed, which would let anyone lock an operator out.
 */

export const AUTH_FAILURE_LIMITS = {
  per_source: 10,
  per_key_prefix: 20,
  window_ms: 60_000,
  /** How much of a presented key names its prefix. */
  prefix_chars: 8,
} as const;

/** Where a failed attempt came from: the edge's `CF-Connecting-IP` and the presented key. */
export interface AttemptOrigin {
  /** Null for a request that did not come through Cloudflare's edge (a test calling the worker). */
  source: string | null;
  key: string | null;
}

/** At most this many sources and prefixes remembered per isolate; a flood of new ones starts over. */
const MAX_REMEMBERED = 4_096;
const overUntil = new Map<string, number>();

function remembered(name: string, now: number): number | null {
  const until = overUntil.get(name);
  if (until === undefined) return null;
  if (until <= now) {
    overUntil.delete(name);
    return null;
  }
  return until - now;
}

async function prefixName(key: string | null): Promise<string | null> {
  if (!key) return null;
  const digest = await sha256Hex(key.slice(0, AUTH_FAILURE_LIMITS.prefix_chars));
  return `auth-failures:key:${digest.slice(0, 32)}`;
}

const sourceName = (source: string | null) => (source ? `auth-failures:source:${source}` : null);

/** Forgets which sources and prefixes were over the limit: for limiters whose storage was wiped. */
export function forgetOverLimit(): void {
  overUntil.clear();
}

/** Before a key is checked: how long its source must still wait (ms), or null to go ahead. */
export function sourceWait(origin: AttemptOrigin, now: number = Date.now()): number | null {
  const name = sourceName(origin.source);
  return name ? remembered(name, now) : null;
}

/**
 * After a key was refused: counts the failure against its source and its prefix, and answers how
 * long to wait (ms) when either is over the limit, or null for an ordinary refusal.
 */
export async function countFailure(
  env: Env,
  origin: AttemptOrigin,
  now: number = Date.now(),
): Promise<number | null> {
  const names: Array<[string, number]> = [];
  const source = sourceName(origin.source);
  if (source) names.push([source, AUTH_FAILURE_LIMITS.per_source]);
  const prefix = await prefixName(origin.key);
  if (prefix) names.push([prefix, AUTH_FAILURE_LIMITS.per_key_prefix]);
  // Already known over here: refused without another request to the limiter.
  const known = Math.max(...names.map(([name]) => remembered(name, now) ?? 0), 0);
  if (known > 0) return known;
  const verdicts = await Promise.all(
    names.map(async ([name, limit]) => {
      const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
      const verdict = await limiter.admit([
        { key: "failures", limit, window_ms: AUTH_FAILURE_LIMITS.window_ms },
      ]);
      return { name, verdict };
    }),
  );
  let wait: number | null = null;
  for (const { name, verdict } of verdicts) {
    if (verdict.ok) continue;
    if (overUntil.size >= MAX_REMEMBERED) overUntil.clear();
    overUntil.set(name, now + verdict.retry_after_ms);
    wait = Math.max(wait ?? 0, verdict.retry_after_ms);
  }
  return wait;
}
