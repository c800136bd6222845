import { environmentOf } from "../config/environment";
import { loadConfig } from "../config/load";
import { newCallId } from "../core/ids";
import { parseTraceparent } from "../core/trace-context";
import type { Env } from "../env";
import { ledgerFor } from "../ledger/client";
import type { PendingOpen, SessionState } from "../ledger/ledger-api";
import { limitCall } from "../machine/limit";
import type { CallRequest } from "../machine/prepare";
import { recordCall } from "../metrics/record";
import { rateSettingsOf } from "../ratelimit/admission";
import { rememberedRefusal, rememberRefusal } from "../ratelimit/edge-memo";
import { acceptFaultHeaders } from "../scenarios/accept";
import type { FaultPlan } from "../scenarios/modes";
import { catalog } from "../tools";
import { type Envelope, type EnvelopeContext, failure } from "../wire/envelope";
import { callAgainOf } from "./call-again";
import { withDeprecation } from "./deprecation";
import { preferredWaitMs } from "./prefer-wait";

/** Who is calling: what a verified run token (REST or MCP) says. */
export interface Caller {
  tenant: string;
  run: string;
  /** The run's namespace, as its token names it. */
  namespace: string;
  /** The open its token carries when that open stored nothing: the ledger creates the run from it. */
  open?: PendingOpen | undefined;
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
  const answer = await answerToolCall(env, caller, request, header, null);
  if (typeof answer === "string") throw new Error("a call outside a session answered a session's state");
  const envelope = withDeprecation(answer, caller.namespace);
  // Counted for the agents' health after the answer is known, and sent after it is given.
  recordCall(env, caller, envelope);
  return envelope;
}

/** Why an MCP session's call was not made: its run has ended, or there is none (not opened yet, or gone). */
export type SessionOver = Exclude<SessionState, "live">;

/**
 * A 2025 MCP session's tool call, through the same entry: the run's ledger checks that the session
 * is live (and records its activity) as it admits the call, in the call's own request. A call
 * refused before the ledger (a remembered rate refusal, input limits, a bad header) asks the ledger
 * about the session alone, so a session that is over is told so whatever its call.
 */
export async function handleSessionToolCall(
  env: Env,
  caller: Caller,
  request: CallRequest,
  header: HeaderReader,
  idleMs: number,
): Promise<Envelope | SessionOver> {
  const answer = await answerToolCall(env, caller, request, header, idleMs);
  if (typeof answer === "string") return answer;
  const envelope = withDeprecation(answer, caller.namespace);
  recordCall(env, caller, envelope);
  return envelope;
}

/** `idleMs`: null outside a session; a session's idle limit otherwise, checked with the call. */
async function answerToolCall(
  env: Env,
  caller: Caller,
  request: CallRequest,
  header: HeaderReader,
  idleMs: number | null,
): Promise<Envelope | SessionOver> {
  const callId = newCallId();
  const environment = environmentOf(env);
  const base = { call_id: callId, environment, tool: request.tool };
  const checked = checkAtEdge(env, caller, request, header, base);
  if (!checked.ok) {
    if (idleMs === null) return checked.envelope;
    const session = await ledgerFor(env, caller.tenant, caller.run).touchSession(
      caller.tenant,
      Date.now(),
      idleMs,
    );
    return session === "live" ? checked.envelope : session;
  }
  try {
    const ledger = ledgerFor(env, caller.tenant, caller.run);
    const input = {
      call_id: callId,
      tenant: caller.tenant,
      ...(caller.open === undefined ? {} : { open: caller.open }),
      request,
      intent: header("x-call-intent")?.trim() || null,
      fault: checked.fault,
      wait_ms: checked.waitMs,
      // A malformed traceparent is ignored (W3C Trace Context): the call starts a new span, never an error.
      traceparent: parseTraceparent(header("traceparent")),
    };
    let envelope: Envelope;
    if (idleMs === null) envelope = await ledger.call(input);
    else {
      const answer = await ledger.sessionCall(input, idleMs);
      if (answer.session !== "live") return answer.session;
      envelope = answer.envelope;
    }
    rememberRefusal(caller.tenant, caller.run, envelope, Date.now());
    return envelope;
  } catch (error) {
    // The ledger was reset or evicted mid-call. Its reservation survives, so a resend is safe.
    console.error("run ledger call failed", error);
    return failure(base, {
      code: "internal_error",
      message: `The run's ledger was interrupted, so whether the call ran is unknown. ${callAgainOf(request.tool ?? null)}`,
    });
  }
}

type EdgeCheck = { ok: true; fault: FaultPlan | null; waitMs: number } | { ok: false; envelope: Envelope };

/** What is answered before the run's ledger: a remembered rate refusal, input limits, the orchestrator's headers. */
function checkAtEdge(
  env: Env,
  caller: Caller,
  request: CallRequest,
  header: HeaderReader,
  base: EnvelopeContext,
): EdgeCheck {
  // A run its ledger rate-limited moments ago is answered here until the wait is over, for reads:
  // any other call may resend a key whose earlier send acted, which only its ledger can tell.
  const isRead =
    request.tool !== null && catalog.find(caller.namespace, request.tool)?.side_effect === "read";
  const remembered =
    isRead &&
    rememberedRefusal(caller.tenant, caller.run, () => rateSettingsOf(env, caller.tenant), Date.now());
  if (remembered) return { ok: false, envelope: failure(base, remembered) };
  const limited = limitCall(request);
  if (limited) return { ok: false, envelope: failure(base, limited) };
  // The orchestrator's fault header is checked before the ledger: a refusal costs no budget.
  const fault = acceptFaultHeaders(header, loadConfig(env).faultInjection);
  if (!fault.ok) {
    const problems = fault.problems;
    return {
      ok: false,
      envelope: failure(base, { code: "validation_error", message: fault.message, problems }),
    };
  }
  const wait = preferredWaitMs(header("prefer"));
  if (!wait.ok) {
    const message = "The Prefer header's wait is not a number of seconds.";
    return {
      ok: false,
      envelope: failure(base, { code: "validation_error", message, problems: wait.problems }),
    };
  }
  return { ok: true, fault: fault.value, waitMs: wait.ms };
}
