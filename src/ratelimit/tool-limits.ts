import { type ToolLimit, toolLimitOf } from "../config/tool-limits";
import { canonicalJson } from "../core/canonical-json";
import type { Env } from "../env";
import type { FailureSpec } from "../wire/envelope";
import { limiterUnavailable, toolLimiterOf } from "./admission";
import type { BucketLimit } from "./token-bucket";

/**
 * Per-tool rate limits across a tenant's runs (`tool_limits` in TENANTS). Each limited tool, or
 * each tool and subject when the limit is `per` an argument, has one token bucket, kept by one of
 * the tenant's TOOL_LIMIT_SHARDS RateLimiter objects (`<tenant>/tools/<n>`), chosen by a hash of
 * the bucket's key: many subjects spread over the shards, and each bucket lives in exactly one, so
 * every call takes its token from the one place that counts it. No lease: the limit is exact.
 */
export const TOOL_LIMIT_SHARDS = 16;

/** How long a subject may be in a bucket's key and a refusal's details; longer ones are cut. */
const MAX_SUBJECT_CHARS = 200;

export interface ToolBucket {
  bucket: BucketLimit;
  /** Which of the tenant's tool-limit shards keeps the bucket. */
  shard: number;
  /** The subject's value, when the limit is per subject. */
  subject: string | null;
}

/** The value of the subject argument as a bucket sees it: a string as it is, anything else as canonical JSON. */
export function subjectOf(args: Record<string, unknown>, per: string): string {
  const value = args[per];
  const text = typeof value === "string" ? value : canonicalJson(value ?? null);
  return text.slice(0, MAX_SUBJECT_CHARS);
}

/** FNV-1a, 32 bits: a stable, cheap spread of bucket keys over shards (not a secret). */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The bucket one call of a limited tool takes its token from. */
export function toolBucket(
  namespace: string,
  tool: string,
  limit: ToolLimit,
  args: Record<string, unknown>,
): ToolBucket {
  const subject = limit.per === undefined ? null : subjectOf(args, limit.per);
  const key = `tool:${namespace}/${tool}${subject === null ? "" : `|${limit.per}=${subject}`}`;
  return {
    bucket: { key, limit: limit.calls, window_ms: limit.window_s * 1000 },
    shard: fnv1a(key) % TOOL_LIMIT_SHARDS,
    subject,
  };
}

/** The `rate_limited` answer of a tool's limit: which limit, which subject, and when to come back. */
export function toolRefusal(
  tool: string,
  limit: ToolLimit,
  subject: string | null,
  retry_after_ms: number,
): FailureSpec {
  const wait_s = Math.ceil(retry_after_ms / 1000);
  const per =
    limit.per !== undefined && subject !== null ? ` for each ${limit.per} (this one: ${subject})` : "";
  return {
    code: "rate_limited",
    message: `This tenant may make ${limit.calls} calls of ${tool} per ${limit.window_s} s across all its runs${per}. Wait ${wait_s} s and send it again; this request was not dispatched and spent no budget.`,
    retry_after_ms,
    side_effect_confirmed: false,
    details: {
      scope: "tool_calls",
      tool,
      limit: limit.calls,
      window_s: limit.window_s,
      ...(limit.per !== undefined ? { per: limit.per, subject } : {}),
    },
  };
}

/**
 * Takes one token of a tool's limit for a call of a tenant's run, or says why not: null when the
 * tool is not limited or the token was taken. The caller decides which calls take one (see
 * RunLedger: a resend of a key already recorded never does).
 */
export async function takeToolToken(
  env: Env,
  tenant: string,
  limits: Parameters<typeof toolLimitOf>[0],
  call: { namespace: string; tool: string; args: Record<string, unknown> },
): Promise<FailureSpec | null> {
  const limit = toolLimitOf(limits, call.namespace, call.tool);
  if (!limit) return null;
  const { bucket, shard, subject } = toolBucket(call.namespace, call.tool, limit, call.args);
  try {
    const decision = await toolLimiterOf(env, tenant, shard).admit([bucket]);
    return decision.ok ? null : toolRefusal(call.tool, limit, subject, decision.retry_after_ms);
  } catch (error) {
    return limiterUnavailable(error);
  }
}
