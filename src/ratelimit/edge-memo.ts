import type { RateLimitSettings } from "../config/rate-settings";
import type { Envelope, FailureSpec } from "../wire/envelope";
import { type RateScope, rateRefusal } from "./admission";

/** At most this many runs remembered per isolate; a flood of distinct runs just starts over. */
const MAX_REMEMBERED = 4_096;

interface Remembered {
  until: number;
  scope: RateScope;
}

/**
 * A run's ledger said "rate limited until T": until then this isolate answers that run's calls the
 * same way itself, without a round trip to the ledger. The ledger's answer was authoritative (its
 * buckets cannot refill before T; the tenant's may get tokens back early from runs that end, which
 * this run then waits for until T), so this changes no verdict that would admit more, only where a
 * flood is turned away: a runaway loop hammering its run costs the edge a map lookup, not a Durable
 * Object request each.
 */
const remembered = new Map<string, Remembered>();

const keyOf = (tenant: string, run: string) => `${tenant}/${run}`;

export function rememberRefusal(tenant: string, run: string, envelope: Envelope, now: number): void {
  const error = envelope.error;
  if (error?.code !== "rate_limited" || !error.retry_after_ms || error.retry_after_ms <= 0) return;
  const scope = (error.details as { scope?: unknown } | null)?.scope;
  if (scope !== "run_calls" && scope !== "tenant_calls") return;
  if (remembered.size >= MAX_REMEMBERED) remembered.clear();
  remembered.set(keyOf(tenant, run), { until: now + error.retry_after_ms, scope });
}

/**
 * The refusal a run's call gets here while its ledger's last one holds, or null. The tenant's
 * settings are read only then: a call of a run that was not refused pays a map lookup, no more.
 */
export function rememberedRefusal(
  tenant: string,
  run: string,
  settings: () => RateLimitSettings,
  now: number,
): FailureSpec | null {
  const key = keyOf(tenant, run);
  const known = remembered.get(key);
  if (!known) return null;
  if (known.until <= now) {
    remembered.delete(key);
    return null;
  }
  return rateRefusal(known.scope, settings(), known.until - now);
}
