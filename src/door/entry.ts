import { environmentOf } from "../config/environment";
import { loadConfig } from "../config/load";
import { newCallId } from "../core/ids";
import { parseTraceparent } from "../core/trace-context";
import type { Env } from "../env";
import { ledgerFor } from "../ledger/client";
import { recordCall } from "../metrics/record";
import { limitCall } from "../pipeline/limit";
import type { CallRequest } from "../pipeline/prepare";
import { rateSettingsOf } from "../ratelimit/admission";
import { rememberedRefusal, rememberRefusal } from "../ratelimit/edge-memo";
import { acceptFaultHeaders } from "../scenarios/accept";
import { catalog } from "../tools";
import { type Envelope, failure } from "../wire/envelope";
import { preferredWaitMs } from "./prefer-wait";

/** Who is calling: what a verified run token (REST or MCP) says. */
export interface Caller {
  tenant: string;
  run: string;
  /** The run's namespace, as its token names it. */
  namespace: string;
}

/** Reads a request header by name, whatever the door's request object is. */
export type HeaderReader = (name: string) => string | undefined;

/**
 * The one entry of a tool call, for both doors: REST (`POST /v1/runs/{id}/calls`) and MCP
 * (`tools/call`) authenticate the caller and read the call body, then hand both here. Everything
 * after that (a run's remembered rate refusal, input limits, the orchestrator's headers, the run's
 * ledger with its rate limits, the answer when the ledger is interrupted, the health counters) happens
 * once, so the two doors cannot drift apart.
 */
export async function handleToolCall(
  env: Env,
  caller: Caller,
  request: CallRequest,
  header: HeaderReader,
): Promise<Envelope> {
  const envelope = await answerToolCall(env, caller, request, header);
  // Counted for the agents' health after the answer is known, and sent after it is given.
  recordCall(env, caller, envelope);
  return envelope;
}

async function answerToolCall(
  env: Env,
  caller: Caller,
  request: CallRequest,
  header: HeaderReader,
): Promise<Envelope> {
  const callId = newCallId();
  const environment = environmentOf(env);
  const base = { call_id: callId, environment, tool: request.tool };
  // A run its ledger rate-limited moments ago is answered here until the wait is over, for reads:
  // any other call may resend a key whose earlier send acted, which only its ledger can tell.
  const isRead =
    request.tool !== null && catalog.find(caller.namespace, request.tool)?.side_effect === "read";
  const remembered =
    isRead &&
    rememberedRefusal(caller.tenant, caller.run, () => rateSettingsOf(env, caller.tenant), Date.now());
  if (remembered) return failure(base, remembered);
  const limited = limitCall(request);
  if (limited) return failure(base, limited);
  // The orchestrator's fault header is checked before the ledger: a refusal costs no budget.
  const fault = acceptFaultHeaders(header, loadConfig(env).faultInjection);
  if (!fault.ok) {
    return failure(base, { code: "validation_error", message: fault.message, problems: fault.problems });
  }
  const wait = preferredWaitMs(header("prefer"));
  if (!wait.ok) {
    return failure(base, {
      code: "validation_error",
      message: "The Prefer header's wait is not a number of seconds.",
      problems: wait.problems,
    });
  }
  try {
    const envelope = await ledgerFor(env, caller.tenant, caller.run).call({
      call_id: callId,
      tenant: caller.tenant,
      request,
      intent: header("x-call-intent")?.trim() || null,
      fault: fault.value,
      wait_ms: wait.ms,
      // A malformed traceparent is ignored (W3C Trace Context): the call starts a new span, never an error.
      traceparent: parseTraceparent(header("traceparent")),
    });
    rememberRefusal(caller.tenant, caller.run, envelope, Date.now());
    return envelope;
  } catch (error) {
    // The ledger was reset or evicted mid-call. Its reservation survives, so a resend is safe.
    console.error("run ledger call failed", error);
    return failure(base, {
      code: "internal_error",
      message:
        "The run's ledger was interrupted. Call again with the same arguments; it cannot happen twice.",
    });
  }
}
