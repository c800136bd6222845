import type { SideEffect } from "../catalog/define-tool";
import { type FaultMode, READ_SHAPE_MODES, WRITE_SHAPE_MODES } from "../wire/scenario";

const DEFAULT_HANG_MS = 30_000;
const DEFAULT_RETRY_AFTER_S = 1;
/** An outage outlasts any sane retry budget, as the sandbox's own default says. */
const DEFAULT_OUTAGE_TIMES = 1_000;

/** What one upstream request will be asked to suffer; null numbers are not sent. */
export interface FaultPlan {
  mode: FaultMode;
  hang_ms: number | null;
  retry_after_s: number | null;
}

/** Only modes that wait carry `hang_ms`; only modes that tell the caller to wait carry `retry_after_s`. */
export function takesHang(mode: FaultMode): boolean {
  return mode === "hang" || mode === "slow_success";
}

export function takesRetryAfter(mode: FaultMode): boolean {
  return mode === "rate_limited" || mode === "transient_forever";
}

export function defaultTimes(mode: FaultMode): number {
  return mode === "transient_forever" ? DEFAULT_OUTAGE_TIMES : 1;
}

/** Fills in the sandbox's defaults, so what is stored is exactly what will be sent. */
export function toFaultPlan(mode: FaultMode, hangMs?: number, retryAfterS?: number): FaultPlan {
  return {
    mode,
    hang_ms: takesHang(mode) ? (hangMs ?? DEFAULT_HANG_MS) : null,
    retry_after_s: takesRetryAfter(mode) ? (retryAfterS ?? DEFAULT_RETRY_AFTER_S) : null,
  };
}

/**
 * Whether a mode can apply to a request of a tool with this side effect. Shape modes change what a
 * read says or what a write does, so a stale answer is never asked of a refund, and a silent
 * failure never of a lookup. Answer and delivery modes fit every request.
 */
export function faultFits(mode: FaultMode, sideEffect: SideEffect): boolean {
  if ((READ_SHAPE_MODES as readonly string[]).includes(mode)) return sideEffect === "read";
  if ((WRITE_SHAPE_MODES as readonly string[]).includes(mode)) return sideEffect !== "read";
  return true;
}

/** The headers that ask the sandbox for this fault on one request (sandbox/API.md, "Faults by header"). */
export function faultHeaders(plan: FaultPlan): Record<string, string> {
  const headers: Record<string, string> = { "x-sandbox-fault": plan.mode };
  if (plan.hang_ms !== null) headers["x-sandbox-fault-hang-ms"] = String(plan.hang_ms);
  if (plan.retry_after_s !== null) headers["x-sandbox-fault-retry-after"] = String(plan.retry_after_s);
  return headers;
}
