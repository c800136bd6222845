import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { assertNever, type FailureSpec } from "../envelope";
import { DEFAULT_RATE_LIMITS, type RateLimitSettings } from "./settings";
import type { BucketLimit, RateRefusal } from "./token-bucket";

/** Which limit refused: named in `error.details.scope` so an orchestrator knows what to slow down. */
export type RateScope = "run_calls" | "tenant_calls" | "runs_opened";

interface ScopedLimit extends BucketLimit {
  scope: RateScope;
}

function settingsOf(env: Env, tenant: string): RateLimitSettings {
  return loadConfig(env).tenants[tenant]?.rate_limits ?? DEFAULT_RATE_LIMITS;
}

function limiterOf(env: Env, tenant: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(tenant));
}

/** The buckets one tool call of `runId` draws from. */
export function callLimits(settings: RateLimitSettings, runId: string): ScopedLimit[] {
  const window_ms = settings.window_s * 1000;
  return [
    { scope: "run_calls", key: `run:${runId}`, limit: settings.calls_per_run, window_ms },
    { scope: "tenant_calls", key: "calls", limit: settings.calls_per_tenant, window_ms },
  ];
}

/** The bucket opening a run draws from. */
export function openLimits(settings: RateLimitSettings): ScopedLimit[] {
  return [
    { scope: "runs_opened", key: "opens", limit: settings.runs_opened, window_ms: settings.window_s * 1000 },
  ];
}

function describeLimit(scope: RateScope, limit: number, window_s: number): string {
  switch (scope) {
    case "run_calls":
      return `This run may make ${limit} tool calls per ${window_s} s`;
    case "tenant_calls":
      return `This tenant may make ${limit} tool calls per ${window_s} s across all its runs`;
    case "runs_opened":
      return `This tenant may open ${limit} runs per ${window_s} s`;
    default:
      return assertNever(scope);
  }
}

async function take(
  env: Env,
  tenant: string,
  limits: ScopedLimit[],
  window_s: number,
): Promise<FailureSpec | null> {
  let decision: { ok: true } | RateRefusal;
  try {
    decision = await limiterOf(env, tenant).admit(
      limits.map(({ key, limit, window_ms }) => ({ key, limit, window_ms })),
    );
  } catch (error) {
    // Fail closed: failing open would let through exactly the flood the limiter exists to stop, and
    // the limiter is the tenant's own, so only the tenant that overloads it is refused.
    console.error("rate limiter unavailable", error);
    return {
      code: "transient_error",
      message: "The proxy could not check this tenant's rate limit. Retry in a second.",
      retry_after_ms: 1_000,
      side_effect_confirmed: false,
    };
  }
  if (decision.ok) return null;
  const refused = limits.find((limit) => limit.key === decision.key) ?? limits[0];
  if (!refused) throw new Error("a rate-limit refusal names no bucket");
  const wait_s = Math.ceil(decision.retry_after_ms / 1000);
  return {
    code: "rate_limited",
    message: `${describeLimit(refused.scope, refused.limit, window_s)}. Wait ${wait_s} s and send it again; this request was not dispatched and spent no budget.`,
    retry_after_ms: decision.retry_after_ms,
    side_effect_confirmed: false,
    details: { scope: refused.scope, limit: refused.limit, window_s },
  };
}

/**
 * Stage "rate limit" of a tool call: one token from the run's bucket and the tenant's, or a
 * `rate_limited` refusal. Runs before the ledger, so a refused call is no dispatch.
 */
export function admitCall(env: Env, tenant: string, runId: string): Promise<FailureSpec | null> {
  const settings = settingsOf(env, tenant);
  return take(env, tenant, callLimits(settings, runId), settings.window_s);
}

/** Rate limit of `POST /v1/runs`, per tenant. */
export function admitRunOpen(env: Env, tenant: string): Promise<FailureSpec | null> {
  const settings = settingsOf(env, tenant);
  return take(env, tenant, openLimits(settings), settings.window_s);
}
