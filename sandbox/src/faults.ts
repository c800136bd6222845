import * as z from "zod";
import { BAD_GATEWAY_PAGE, loginPage, stackTrace } from "./fault-pages";
import type { FaultSpec, RequestMeta } from "./journal";
import {
  ANSWER_MODES,
  type AnswerMode,
  FAULT_MODES,
  type FaultMode,
  type FaultPlan,
  SHAPE_MODES,
  type ShapeMode,
} from "./model";
import { describeIssues } from "./validation";

/**
 * Scripted upstream failures, armed per run (`POST /_admin/faults`) or asked for by one request
 * (`X-Sandbox-Fault`). Each reproduces what a real, misbehaving upstream or the infrastructure in
 * front of it does, because that is what the proxy has to survive.
 */

export const DEFAULT_HANG_MS = 30_000;
const MAX_HANG_MS = 300_000;
const MAX_RETRY_AFTER_S = 3600;
const DEFAULT_RETRY_AFTER_S = 1;
/** An outage, not a blip: by default it outlasts any sane retry budget. */
const DEFAULT_OUTAGE_TIMES = 1000;

const FaultModeSchema = z.enum(FAULT_MODES);

export const FaultSpecSchema = z.strictObject({
  run_id: z.string().min(1).max(200),
  path_prefix: z.string().startsWith("/").max(200).optional(),
  mode: FaultModeSchema,
  times: z.number().int().min(1).max(1000).optional(),
  hang_ms: z.number().int().min(0).max(MAX_HANG_MS).optional(),
  retry_after_s: z.number().int().min(0).max(MAX_RETRY_AFTER_S).optional(),
});

/** Fills in defaults so the armed fault shows exactly what will happen. */
export function toFaultSpec(input: z.infer<typeof FaultSpecSchema>): FaultSpec {
  return {
    run_id: input.run_id,
    path_prefix: input.path_prefix ?? null,
    times: input.times ?? (input.mode === "transient_forever" ? DEFAULT_OUTAGE_TIMES : 1),
    ...toFaultPlan(input.mode, input.hang_ms, input.retry_after_s),
  };
}

/** Only the modes that wait or ask the caller to wait carry those numbers; the rest show null. */
function toFaultPlan(
  mode: FaultMode,
  hangMs: number | undefined,
  retryAfterS: number | undefined,
): FaultPlan {
  const waits = mode === "hang" || mode === "slow_success";
  const asksToWait = mode === "rate_limited" || mode === "transient_forever";
  return {
    mode,
    hang_ms: waits ? (hangMs ?? DEFAULT_HANG_MS) : null,
    retry_after_s: asksToWait ? (retryAfterS ?? DEFAULT_RETRY_AFTER_S) : null,
  };
}

function wholeNumberHeader(max: number) {
  return z
    .string()
    .regex(/^\d{1,9}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().max(max))
    .optional();
}

const FaultHeadersSchema = z.object({
  "x-sandbox-fault": FaultModeSchema,
  "x-sandbox-fault-hang-ms": wholeNumberHeader(MAX_HANG_MS),
  "x-sandbox-fault-retry-after": wholeNumberHeader(MAX_RETRY_AFTER_S),
});

export type RequestedFault = { ok: true; fault: FaultPlan | null } | { ok: false; message: string };

/**
 * The fault one request asks for by header, for that request only: nothing is armed or consumed.
 * `shapes` are the shape faults the endpoint (`where`) supports; asking for another is refused.
 */
export function requestedFault(
  header: (name: string) => string | undefined,
  shapes: readonly ShapeMode[],
  where: string,
): RequestedFault {
  const mode = header("x-sandbox-fault");
  if (mode === undefined) return { ok: true, fault: null };
  const parsed = FaultHeadersSchema.safeParse({
    "x-sandbox-fault": mode.trim(),
    "x-sandbox-fault-hang-ms": header("x-sandbox-fault-hang-ms")?.trim(),
    "x-sandbox-fault-retry-after": header("x-sandbox-fault-retry-after")?.trim(),
  });
  if (!parsed.success) return { ok: false, message: describeIssues(parsed.error) };
  const h = parsed.data;
  if (!faultFits(h["x-sandbox-fault"], shapes)) {
    return { ok: false, message: `x-sandbox-fault: '${h["x-sandbox-fault"]}' does not apply to ${where}.` };
  }
  return {
    ok: true,
    fault: toFaultPlan(h["x-sandbox-fault"], h["x-sandbox-fault-hang-ms"], h["x-sandbox-fault-retry-after"]),
  };
}

export function isAnswerMode(mode: FaultMode): mode is AnswerMode {
  return (ANSWER_MODES as readonly FaultMode[]).includes(mode);
}

function isShapeMode(mode: FaultMode): mode is ShapeMode {
  return (SHAPE_MODES as readonly FaultMode[]).includes(mode);
}

/** Answer and delivery faults fit any endpoint; a shape fault only one that declares it. */
export function faultFits(mode: FaultMode, shapes: readonly ShapeMode[]): boolean {
  return !isShapeMode(mode) || shapes.includes(mode);
}

/** Status of a fault that answers instead of the application. */
export function faultStatus(mode: AnswerMode): number {
  switch (mode) {
    case "error_500":
      return 500;
    case "bad_gateway":
      return 502;
    case "html":
      return 200;
    case "rate_limited":
      return 429;
    case "transient_forever":
      return 503;
  }
}

export function faultResponse(fault: FaultPlan & { mode: AnswerMode }, meta: RequestMeta): Response {
  const status = faultStatus(fault.mode);
  const retryAfter = String(fault.retry_after_s ?? DEFAULT_RETRY_AFTER_S);
  switch (fault.mode) {
    case "error_500":
      return new Response(stackTrace(meta), {
        status,
        headers: { "content-type": "text/plain; charset=utf-8" },
      });
    case "bad_gateway":
      return new Response(BAD_GATEWAY_PAGE, {
        status,
        headers: { "content-type": "text/html", server: "nginx/1.24.0" },
      });
    case "html":
      return new Response(loginPage(meta), {
        status,
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    case "rate_limited": {
      const body = {
        error: { code: "rate_limited", message: `Too many requests. Retry after ${retryAfter} second(s).` },
      };
      return Response.json(body, { status, headers: { "retry-after": retryAfter } });
    }
    case "transient_forever": {
      // Every attempt says "soon": only a retry budget, never this answer, ends the loop.
      const body = {
        error: {
          code: "service_unavailable",
          message: "The service is temporarily unavailable. Please retry shortly.",
        },
      };
      return Response.json(body, { status, headers: { "retry-after": retryAfter } });
    }
  }
}

/** A body cut off halfway, as when a proxy or load balancer drops the connection mid-response. */
export function truncate(text: string): string {
  return text.slice(0, Math.floor(text.length / 2));
}
