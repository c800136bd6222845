import { loadConfig } from "../config/load";
import { tenantObject } from "../config/placement";
import { DEFAULT_RATE_LIMITS, type RateLimitSettings } from "../config/rate-settings";
import type { Env } from "../env";
import { assertNever, type FailureSpec } from "../wire/envelope";
import type { BucketLimit } from "./token-bucket";

/** Which limit refused: named in `error.details.scope` so an orchestrator knows what to slow down. */
export type RateScope = "run_calls" | "tenant_calls" | "runs_opened";

export function rateSettingsOf(env: Env, tenant: string): RateLimitSettings {
  return loadConfig(env).tenants[tenant]?.rate_limits ?? DEFAULT_RATE_LIMITS;
}

/** The tenant's RateLimiter: its tenant-wide buckets (calls across runs, run openings). */
export function limiterOf(env: Env, tenant: string) {
  return tenantObject(env, env.RATE_LIMITER, tenant, tenant);
}

/** One of the tenant's RateLimiters of per-tool limits (see tool-limits.ts). */
export function toolLimiterOf(env: Env, tenant: string, shard: number) {
  return tenantObject(env, env.RATE_LIMITER, tenant, `${tenant}/tools/${shard}`);
}

/** The bucket of one scope under a tenant's settings. */
export function bucketOf(scope: RateScope, settings: RateLimitSettings, runId = ""): BucketLimit {
  const window_ms = settings.window_s * 1000;
  switch (scope) {
    case "run_calls":
      return { key: `run:${runId}`, limit: settings.calls_per_run, window_ms };
    case "tenant_calls":
      return { key: "calls", limit: settings.calls_per_tenant, window_ms };
    case "runs_opened":
      return { key: "opens", limit: settings.runs_opened, window_ms };
    default:
      return assertNever(scope);
  }
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

/** The `rate_limited` refusal of a scope: what the limit is and exactly when to come back. */
export function rateRefusal(
  scope: RateScope,
  settings: RateLimitSettings,
  retry_after_ms: number,
): FailureSpec {
  const limit = bucketOf(scope, settings).limit;
  const wait_s = Math.ceil(retry_after_ms / 1000);
  return {
    code: "rate_limited",
    message: `${describeLimit(scope, limit, settings.window_s)}. Wait ${wait_s} s and send it again; this request was not dispatched and spent no budget.`,
    retry_after_ms,
    side_effect_confirmed: false,
    details: { scope, limit, window_s: settings.window_s },
  };
}

/**
 * Fail closed when the tenant's limiter cannot answer: failing open would let through exactly the
 * flood the limiter exists to stop, and the limiter is the tenant's own, so only the tenant that
 * overloads it is refused.
 */
export function limiterUnavailable(error: unknown): FailureSpec {
  console.error("rate limiter unavailable", error);
  return {
    code: "transient_error",
    message: "The proxy could not check this tenant's rate limit. Retry in a second.",
    retry_after_ms: 1_000,
    side_effect_confirmed: false,
  };
}

/** Rate limit of opening a run (`POST /v1/runs`, an MCP session's first call), per tenant: one token per run. */
export async function admitRunOpen(env: Env, tenant: string): Promise<FailureSpec | null> {
  const settings = rateSettingsOf(env, tenant);
  const bucket = bucketOf("runs_opened", settings);
  try {
    const decision = await limiterOf(env, tenant).admit([bucket]);
    return decision.ok ? null : rateRefusal("runs_opened", settings, decision.retry_after_ms);
  } catch (error) {
    return limiterUnavailable(error);
  }
}
