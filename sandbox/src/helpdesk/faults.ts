import { DEFAULT_HANG_MS, faultResponse, requestedFault, truncate } from "../faults";
import type { RequestMeta } from "../journal";
import { type FaultPlan, isOversizedMode } from "../model";
import { oversizedToolResult } from "../oversized";

/**
 * Faults of the MCP endpoint. It takes the sandbox's `X-Sandbox-Fault` header and armed faults
 * (answer modes answer instead of the server, so nothing is applied; `hang` waits before serving;
 * `slow_success` and `truncated` spoil the delivery of an answer already applied), plus two modes
 * only a JSON-RPC endpoint has a use for, by header only: the request is served (a write applied
 * and stored under its key), then the answer is lost.
 */
export const HELPDESK_FAULT_MODES = [
  /** A 500 with a stack trace, after the effect. */
  "error_after_effect",
  /** Half the answer, then the connection is reset. */
  "dropped_connection",
] as const;
type HelpdeskFaultMode = (typeof HELPDESK_FAULT_MODES)[number];

export type ChosenFault =
  | { ok: true; plan: FaultPlan | null; after: HelpdeskFaultMode | null }
  | { ok: false; message: string };

function isHelpdeskMode(mode: string): mode is HelpdeskFaultMode {
  return (HELPDESK_FAULT_MODES as readonly string[]).includes(mode);
}

/** The fault a request asks for by header. Shape faults of the REST endpoints do not apply here. */
export function chosenFault(header: (name: string) => string | undefined): ChosenFault {
  const mode = header("x-sandbox-fault")?.trim();
  if (mode !== undefined && isHelpdeskMode(mode)) return { ok: true, plan: null, after: mode };
  const requested = requestedFault(header, [], "POST /mcp");
  return requested.ok ? { ok: true, plan: requested.fault, after: null } : requested;
}

/** How long `hang` waits before the server runs. */
export function hangBefore(plan: FaultPlan | null): number {
  return plan?.mode === "hang" ? (plan.hang_ms ?? DEFAULT_HANG_MS) : 0;
}

/** Delivers the server's answer, spoiled as the fault says; the effect is already stored. */
export async function deliver(
  answer: Response,
  plan: FaultPlan | null,
  after: HelpdeskFaultMode | null,
  meta: RequestMeta,
): Promise<Response> {
  if (after === "error_after_effect")
    return faultResponse({ mode: "error_500", hang_ms: null, retry_after_s: null }, meta);
  if (after === "dropped_connection") return dropped(answer);
  if (plan?.mode === "slow_success") await scheduler.wait(plan.hang_ms ?? DEFAULT_HANG_MS);
  if (plan && isOversizedMode(plan.mode)) return oversizedToolResult(plan.mode, await rpcIdOf(answer));
  if (plan?.mode === "truncated") {
    return new Response(truncate(await answer.text()), { status: answer.status, headers: answer.headers });
  }
  return answer;
}

/** The status line and half the body arrive, then the stream errors: the client's read fails. */
async function dropped(answer: Response): Promise<Response> {
  const half = new TextEncoder().encode(truncate(await answer.text()));
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(half);
      controller.error(new Error("connection reset by peer"));
    },
  });
  return new Response(body, { status: answer.status, headers: answer.headers });
}

/** The JSON-RPC id the server's answer carries, for the oversized answer that replaces it. */
async function rpcIdOf(answer: Response): Promise<unknown> {
  try {
    const body = (await answer.json()) as { id?: unknown };
    return body.id ?? null;
  } catch {
    return null;
  }
}
