import { type CallToolResult, ProtocolError, SdkHttpError } from "@modelcontextprotocol/client";
import { IDEMPOTENCY_META_KEY } from "../catalog/declaration";
import type { RemoteTool } from "../catalog/define-tool";
import type { ExceededBound } from "../core/answer-bounds";
import { AnswerMeter, type ByteTally, boundedResponse } from "../core/answer-meter";
import { checkPin, markDefinitionsChanged } from "./mcp-definitions";
import { type Connected, connect, forgetConnection, remembersSession } from "./mcp-session";

/**
 * One call of a remote MCP tool: connect (reusing what the isolate knows of the server), check the
 * pin, then `tools/call` with the derived key where the server takes it, hearing whether the server
 * says its tools changed. What came back is told
 * as it is; the dispatch decides what it means (src/upstream/dispatch-remote.ts).
 */

export interface RemoteCallInput {
  remote: RemoteTool;
  tenant: string;
  /** The tool's arguments, exactly as stored under the call's key. */
  args: Record<string, unknown>;
  key: string | null;
  /**
   * Sends one HTTP message of this call with its credential; `body` is the message's text, read
   * once. `effect` is true for the `tools/call` message alone: a fault planned for the call applies
   * to it, not to a handshake or a listing.
   */
  send: (request: Request, body: string | null, effect: boolean) => Promise<Response>;
  timeoutMs: number;
}

export type RemoteOutcome =
  /** The live definition is not the pinned one: nothing was called. */
  | { kind: "drift"; drift: "vanished" | "changed"; live_pin: string | null }
  | { kind: "result"; result: CallToolResult }
  /** An answer crossed one of `ANSWER_BOUNDS`: cut off there, and the call abandoned. */
  | { kind: "too_large"; exceeded: ExceededBound; stage: "connect" | "call" }
  /** A JSON-RPC error; `refused` when the server refused the request before running the tool. */
  | { kind: "rpc_error"; code: number; refused: boolean }
  | { kind: "http_error"; status: number; stage: "connect" | "call" }
  | { kind: "timeout"; stage: "connect" | "call" }
  | { kind: "network_error"; stage: "connect" | "call" };

/** JSON-RPC codes that mean the server did not run the tool: parse, invalid request, no method, bad params. */
const REFUSED_BEFORE_EXECUTION = new Set([-32700, -32600, -32601, -32602]);

/**
 * What bounds one call's answers: every HTTP answer of the call is counted as the MCP client reads
 * it (JSON or an SSE stream), against one byte tally for the whole call. The first bound crossed
 * is kept and the call aborted, so a stream the client would otherwise keep reading, or resume,
 * ends there rather than at the timeout.
 */
interface CallBounds {
  tally: ByteTally;
  crossed: ExceededBound | null;
  controller: AbortController;
}

function bind(bounds: CallBounds, response: Response): Response {
  const meter = new AnswerMeter(response.headers.get("content-type") ?? "", bounds.tally);
  return boundedResponse(response, meter, (crossed) => {
    bounds.crossed ??= crossed;
    bounds.controller.abort(new DOMException("answer too large", "AbortError"));
  });
}

export async function callRemote(input: RemoteCallInput): Promise<RemoteOutcome> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("tool timeout", "TimeoutError")),
    input.timeoutMs,
  );
  const bounds: CallBounds = { tally: { bytes: 0 }, crossed: null, controller };
  try {
    // Whether the handshake is skipped for a session the server may have forgotten since.
    const resumed = remembersSession(input.remote.server, input.tenant);
    const outcome = await attempt(input, bounds);
    // A server that forgot the session refuses the request before it runs anything: 404 as the
    // specification says, or 400 as some servers answer an id they do not know. One fresh handshake.
    if (resumed && outcome.kind === "http_error" && (outcome.status === 404 || outcome.status === 400)) {
      forgetConnection(input.remote.server, input.tenant);
      return await attempt(input, bounds);
    }
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}

async function attempt(input: RemoteCallInput, bounds: CallBounds): Promise<RemoteOutcome> {
  const { remote, key } = input;
  const { signal } = bounds.controller;
  let stage: "connect" | "call" = "connect";
  let connected: Connected | null = null;
  const withKey = key !== null && remote.server.carriers.includes("header");
  const send = async (request: Request) => {
    const body = request.method === "POST" ? await request.clone().text() : null;
    const effect = stage === "call" && isCall(body);
    if (effect && withKey && key) request.headers.set("idempotency-key", key);
    return bind(bounds, await input.send(request, body, effect));
  };
  try {
    connected = await connect(remote.server, input.tenant, send, signal);
    // A server that says, on any stream of this call, that its tools changed is listed again from
    // the next call on: a changed definition is refused from then, not only once the listing ages.
    connected.client.setNotificationHandler("notifications/tools/list_changed", () =>
      markDefinitionsChanged(remote.server, input.tenant),
    );
    const pin = await checkPin(connected.client, remote, input.tenant, signal);
    if (!pin.ok) return { kind: "drift", drift: pin.drift, live_pin: pin.live_pin };
    stage = "call";
    const result = await connected.client.callTool(paramsOf(input), {
      signal,
      timeout: input.timeoutMs,
      // Without its output schema: the proxy checks the result against the declared whitelist itself,
      // and a mismatch the client found would surface as an error that reads like a refusal.
      toolDefinition: { ...pin.definition, outputSchema: undefined },
    });
    if (bounds.crossed) return { kind: "too_large", exceeded: bounds.crossed, stage };
    return { kind: "result", result: result as CallToolResult };
  } catch (error) {
    if (bounds.crossed) return { kind: "too_large", exceeded: bounds.crossed, stage };
    return outcomeOf(error, stage, signal);
  } finally {
    await connected?.close().catch(() => {});
  }
}

/** The `tools/call` params, with the derived key where the server's declaration says it goes. */
function paramsOf({ remote, args, key }: RemoteCallInput) {
  const params: {
    name: string;
    arguments: Record<string, unknown>;
    _meta?: Record<string, unknown>;
    idempotencyKey?: string;
  } = { name: remote.tool, arguments: { ...args } };
  if (key === null) return params;
  for (const carrier of remote.server.carriers) {
    if (carrier === "meta") params._meta = { [IDEMPOTENCY_META_KEY]: key };
    else if (carrier === "params") params.idempotencyKey = key;
    else if (typeof carrier === "object") params.arguments[carrier.argument] = key;
  }
  return params;
}

function isCall(body: string | null): boolean {
  if (body === null) return false;
  try {
    return (JSON.parse(body) as { method?: unknown }).method === "tools/call";
  } catch {
    return false;
  }
}

function outcomeOf(error: unknown, stage: "connect" | "call", signal: AbortSignal): RemoteOutcome {
  if (signal.aborted) return { kind: "timeout", stage };
  if (error instanceof SdkHttpError) return { kind: "http_error", status: error.status, stage };
  if (error instanceof ProtocolError) {
    return { kind: "rpc_error", code: error.code, refused: REFUSED_BEFORE_EXECUTION.has(error.code) };
  }
  return { kind: "network_error", stage };
}
