import {
  isInitializeRequest,
  isJsonContentType,
  isLegacyRequest,
  readRequestBody,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { type Context, Hono } from "hono";
import type { AgentPrincipal } from "../auth/agent-keys";
import { authenticate } from "../auth/authenticate";
import { bearerToken } from "../auth/keys";
import type { PrincipalOf } from "../auth/principal";
import { loadConfig } from "../config/load";
import { readCallBody } from "../door/call-body";
import type { AppEnv } from "../http/app-env";
import { requestContext, respond } from "../http/respond";
import { catalog } from "../tools";
import { type Envelope, failure, httpStatusFor } from "../wire/envelope";
import { MAX_CALL_BODY_BYTES, openRunBodySchema } from "../wire/requests";
import { toCallToolResult } from "./call-result";
import { serveCurrent } from "./current";
import { type JsonRpcId, requestIdOf, rpcError } from "./json-rpc";
import { ownOriginOnly } from "./origin";
import {
  challenge,
  MCP_PATH,
  PROTECTED_RESOURCE_PATH,
  protectedResourceMetadata,
} from "./protected-resource";
import { createRunServer, type RunServerContext } from "./server";
import { callInSession, endSession, openReservedRun, openSession, resumeSession, sessionOf } from "./session";

/**
 * `/mcp` (Streamable HTTP) and the metadata documents that tell clients how to reach it.
 *
 * Two revisions on one endpoint. 2025 clients: a run token is its run on every request; an agent's
 * `initialize` answers with an `Mcp-Session-Id` naming the session's run, which every later request
 * of the session carries; the run opens at the session's first `tools/call` (see `session.ts`). 2026-07-28 clients (no sessions) go to `current.ts`: a run token is its run,
 * an agent names its run in every call with the run handle `start_task` minted. Either way each
 * request gets a fresh server, and nothing survives it but what the run's ledger stores, so any
 * isolate can serve the next one.
 */
export const mcp = new Hono<AppEnv>();

type McpContext = Context<AppEnv>;

const SESSION_HEADER = "mcp-session-id";

const metadata = (c: { req: { url: string } }) => protectedResourceMetadata(new URL(c.req.url).origin);
// Clients try the path-suffixed document first (RFC 9728 section 3.1), then the bare one.
mcp.get(PROTECTED_RESOURCE_PATH, (c) => c.json(metadata(c)));
mcp.get(`${PROTECTED_RESOURCE_PATH}${MCP_PATH}`, (c) => c.json(metadata(c)));

mcp.use(MCP_PATH, ownOriginOnly);

mcp.post(MCP_PATH, async (c) => {
  const principal = await authenticated(c);
  if (principal instanceof Response) return principal;
  // The body is read and parsed once, here, and handed on parsed. The revision is read from the
  // request itself (a `_meta` envelope claim, or none for 2025) by the SDK's own classification
  // (`isLegacyRequest`, given the parsed body): what it decides when it reads the body itself is
  // kept for the bodies it never sees parsed. An empty or unparseable body is 2025 traffic (the
  // SDK's "no-json-body" step), and one over the limit or unreadable goes, unread by anyone since,
  // to the current revision's handler, which answers it (its "body-too-large" and
  // "unreadable-body" steps).
  const read = await readMessage(c.req.raw);
  if (read.kind === "json" && holdsPrototypeKey(read.body)) {
    // The SDK's own parse would drop the field without a word, where the REST door refuses it. A
    // request is answered with the error (200); input holding no request (a notification) has no
    // answer to carry it, and Streamable HTTP says input the server cannot accept is an HTTP error.
    return rpcError(
      holdsRequest(read.body) ? 200 : 400,
      -32602,
      'Invalid params: "__proto__" is not accepted as a field name anywhere in a message. Rename or remove the field.',
      requestIdOf(read.body),
    );
  }
  const legacy =
    read.kind === "json"
      ? await isLegacyRequest(c.req.raw, read.body, { maxRequestBodySize: MAX_CALL_BODY_BYTES })
      : read.kind === "not-json";
  if (read.kind === "unread" || !legacy) {
    const caller =
      principal.kind === "run"
        ? { kind: "run" as const, claims: principal.claims }
        : { kind: "agent" as const, agent: principal.agent };
    const ctx = {
      env: c.env,
      caller,
      header: (name: string) => c.req.header(name),
      catalogVersion: await catalog.version(),
    };
    const request = read.kind === "unread" ? read.request : c.req.raw;
    return serveCurrent(request, ctx, MAX_CALL_BODY_BYTES, read.kind === "json" ? read.body : undefined);
  }
  if (principal.kind === "agent") return serveAgent(c, principal.agent, read);
  // The SDK's transport answers a body that is not JSON itself (-32700): it reads it again, as sent.
  if (read.kind === "not-json")
    return serve(c, principal.claims, undefined, {}, withBody(c.req.raw, read.text));
  return serve(c, principal.claims, read.body);
});

// No stream to open: a call ends with one result, answered on its POST.
mcp.get(MCP_PATH, (c) => methodNotAllowed(c));

// `DELETE` ends an agent's session and its run. A run token's connection has no session to end.
mcp.delete(MCP_PATH, async (c) => {
  const sessionId = c.req.header(SESSION_HEADER);
  if (!sessionId) return methodNotAllowed(c);
  const principal = await authenticated(c);
  if (principal instanceof Response) return principal;
  if (principal.kind === "run") return methodNotAllowed(c);
  const session = await resumeSession(c.env, principal.agent, sessionId);
  if (!session) return sessionNotFound(null);
  // A session that never called has no run: ending it ends (and stores) nothing.
  await endSession(c.env, session.claims);
  return c.body(null, 200);
});

/** The grant props the OAuth provider hands an authenticated request on its execution context. */
function oauthPropsOf(c: McpContext): unknown {
  try {
    return c.executionCtx.props;
  } catch {
    // Hono throws when the app is called without an execution context: then there is no grant.
    return undefined;
  }
}

/**
 * A run token (stateless: the token is the run, whose `run` and `ns` claims decide what every request
 * reaches) or an agent, by its agent key or an OAuth grant for one of its tenant's agent profiles (a
 * session is a run). A refusal is a 401 with the challenge the MCP authorization spec expects: where
 * the resource metadata is, and why a presented credential was refused.
 */
async function authenticated(c: McpContext): Promise<PrincipalOf<"mcp"> | Response> {
  const answer = await authenticate(loadConfig(c.env), bearerToken(c.req.header("authorization")), "mcp", {
    oauthProps: oauthPropsOf(c),
  });
  if (answer.ok) return answer.principal;
  const { reason, message } = answer.refusal;
  const origin = new URL(c.req.url).origin;
  c.header(
    "WWW-Authenticate",
    reason === "missing"
      ? challenge(origin)
      : challenge(origin, { code: "invalid_token", description: message }),
  );
  return respond(c, failure(requestContext(c.env), { code: "permission_error", message }), {
    authFailure: answer.refusal.status === 401,
  });
}

/**
 * One request of one run, through the SDK's stateless transport (no `sessionIdGenerator`). That
 * transport ignores an incoming `Mcp-Session-Id` (the session is checked before this, or with its call) and still
 * refuses an unsupported `MCP-Protocol-Version` header on every request but `initialize`.
 */
async function serve(
  c: McpContext,
  claims: RunServerContext["claims"],
  parsedBody?: unknown,
  session: Pick<RunServerContext, "openRun" | "callTool"> = {},
  request: Request = c.req.raw,
): Promise<Response> {
  const server = createRunServer({
    env: c.env,
    claims,
    header: (name) => c.req.header(name),
    catalogVersion: await catalog.version(),
    ...session,
  });
  // A JSON answer, unless a call asks for progress (it may wait for an approval's decision): then an
  // SSE stream carries the progress notification and the result.
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !asksForProgress(parsedBody),
    maxRequestBodySize: MAX_CALL_BODY_BYTES,
  });
  await server.connect(transport);
  return transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
}

/** Whether a request (or a batch) holds a `tools/call` with a progress token in its `_meta`. */
function asksForProgress(body: unknown): boolean {
  const one = (message: unknown): boolean => {
    if (typeof message !== "object" || message === null || !("method" in message)) return false;
    if (message.method !== "tools/call" || !("params" in message)) return false;
    const params = message.params as { _meta?: { progressToken?: unknown } } | null;
    return params?._meta?.progressToken !== undefined;
  };
  return Array.isArray(body) ? body.some(one) : one(body);
}

/** The header an agent's MCP session names its orchestrator's task in, as `task_key` of POST /v1/runs. */
const TASK_KEY_HEADER = "X-Task-Key";
const TaskKeySchema = openRunBodySchema().shape.task_key;

/**
 * A POST's body, read once. `json`: parsed. `not-json`: empty or not JSON. `unread`: over
 * MAX_CALL_BODY_BYTES, or its stream failed; `request` still holds it as sent, for the handler
 * that answers it.
 */
type ReadMessage =
  | { kind: "json"; body: unknown }
  | { kind: "not-json"; text: string }
  | { kind: "unread"; request: Request };

/**
 * The body of a request, at most MAX_CALL_BODY_BYTES. A body framed by its Content-Length (no
 * Transfer-Encoding) is refused or read whole by that length, as hono's bodyLimit does at the REST
 * door: a body over the limit is left unread. A streamed one is counted as it arrives (the SDK's
 * reader), from a copy, so the request keeps it whole for the answer to a body over the limit.
 */
async function readMessage(request: Request): Promise<ReadMessage> {
  const declared = request.headers.get("content-length");
  const framed = declared !== null && request.body !== null && !request.headers.has("transfer-encoding");
  if (framed && Number(declared) > MAX_CALL_BODY_BYTES) return { kind: "unread", request };
  let text: string;
  try {
    if (framed) text = await request.text();
    else {
      const read = await readRequestBody(
        request.body === null ? request : request.clone(),
        MAX_CALL_BODY_BYTES,
      );
      if (read.tooLarge) return { kind: "unread", request };
      text = read.text;
    }
  } catch {
    return { kind: "unread", request };
  }
  if (text.length === 0) return { kind: "not-json", text };
  try {
    return { kind: "json", body: JSON.parse(text) };
  } catch {
    return { kind: "not-json", text };
  }
}

/** `request` with `text` as its body, for a reader that reads it again. */
function withBody(request: Request, text: string): Request {
  return new Request(request.url, { method: request.method, headers: request.headers, body: text });
}

/**
 * A request with an agent's credential. The body is read here, once, because only `initialize`
 * may come without a session: its answer names the session (and its run) in `Mcp-Session-Id`.
 */
async function serveAgent(
  c: McpContext,
  agent: AgentPrincipal,
  read: Exclude<ReadMessage, { kind: "unread" }>,
): Promise<Response> {
  if (read.kind === "not-json") return rpcError(400, -32700, "Parse error: Invalid JSON", null);
  const body = read.body;
  const id = requestIdOf(body);
  const initialize = Array.isArray(body) ? body.some(isInitialize) : isInitialize(body);
  if (initialize) {
    // A new session, whatever session id came along (the SDK client sends none on initialize).
    const taskKey = TaskKeySchema.safeParse(c.req.header(TASK_KEY_HEADER));
    if (!taskKey.success) {
      const problem = taskKey.error.issues[0]?.message ?? "not a task key";
      return rpcError(400, -32602, `${TASK_KEY_HEADER}: ${problem}.`, id);
    }
    const opened = await openSession(c.env, agent, taskKey.data);
    if (!opened.ok) {
      // The envelope rides along as the error's data: a rate limit's retry_after_ms, a limit's name.
      const error = opened.envelope.error;
      const response = rpcError(
        httpStatusFor(opened.envelope),
        -32000,
        error?.message ?? "No run opened.",
        id,
        error,
      );
      if (error?.retry_after_ms)
        response.headers.set("Retry-After", String(Math.ceil(error.retry_after_ms / 1000)));
      return response;
    }
    const response = await serve(c, opened.claims, body);
    // The transport refused the request (headers, a batch): a run a task key opened for it is not
    // wanted, unless it was opened before, and lives on for the task's other sessions.
    if (!response.ok && opened.run === "opened") {
      await endSession(c.env, opened.claims);
      return response;
    }
    const headers = new Headers(response.headers);
    headers.set(SESSION_HEADER, opened.sessionId);
    return new Response(response.body, { status: response.status, headers });
  }
  const sessionId = c.req.header(SESSION_HEADER);
  if (!sessionId) {
    return rpcError(
      400,
      -32000,
      "Bad Request: no Mcp-Session-Id. Send initialize first: it starts a session for this agent key (its run opens at the first tools/call) and answers with the Mcp-Session-Id to send on every later request.",
      id,
    );
  }
  if (isLoneCall(body)) return serveSessionCall(c, agent, sessionId, body, id);
  const session = await resumeSession(c.env, agent, sessionId);
  if (!session) return sessionNotFound(id);
  if (session.opened) return serve(c, session.claims, body);
  // The run is reserved: the first tools/call opens it, once for all the calls of this request.
  let opening: Promise<Envelope | null> | undefined;
  const openRun = () => {
    opening ??= openReservedRun(c.env, agent, session.claims);
    return opening;
  };
  return serve(c, session.claims, body, { openRun });
}

/**
 * An `initialize` request, as the SDK's schema says. Only a message whose method is `initialize` can
 * be one, so any other message (a session's every `tools/call`) is told apart without the schema.
 */
function isInitialize(message: unknown): boolean {
  return (
    typeof message === "object" &&
    message !== null &&
    "method" in message &&
    message.method === "initialize" &&
    isInitializeRequest(message)
  );
}

/**
 * A session's request that is one `tools/call` answered as JSON: its session is checked by the
 * run's ledger with the call itself, in one request (`callInSession`), not before it. The answer is
 * whole before it is sent, so a session found over is still answered 404, with nothing called.
 */
async function serveSessionCall(
  c: McpContext,
  agent: AgentPrincipal,
  sessionId: string,
  body: unknown,
  id: JsonRpcId,
): Promise<Response> {
  const claims = await sessionOf(c.env, agent, sessionId);
  if (!claims) return sessionNotFound(id);
  const plain = plainCall(c.req.raw, body);
  if (plain) return answerPlainCall(c, agent, claims, plain);
  let over = false;
  const callTool: RunServerContext["callTool"] = async (_caller, request, header) => {
    const answer = await callInSession(c.env, agent, claims, request, header);
    if (answer !== "over") return answer;
    over = true;
    // Never sent: the request is answered 404 instead.
    return failure(requestContext(c.env), { code: "not_found", message: "The session is over." });
  };
  const response = await serve(c, claims, body, { callTool });
  return over ? sessionNotFound(id) : response;
}

/** A session's `tools/call` that every check of the SDK's transport and server would let through. */
interface PlainCall {
  id: string | number;
  tool: string;
  args: Record<string, unknown>;
}

const CALL_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAMS_KEYS = new Set(["name", "arguments"]);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The request, when it is a session's `tools/call` in its plainest form: the transport's headers
 * as its checks want them (Accept naming both JSON and event streams, a JSON Content-Type, an
 * `MCP-Protocol-Version` it supports or none, as `WebStandardStreamableHTTPServerTransport`'s
 * `handlePostRequest` and `validateProtocolVersion` check them in @modelcontextprotocol/server
 * 2.4), and a body of exactly `jsonrpc: "2.0"`, a string or integer id, `method`, and `params`
 * holding a string `name` and optionally an object `arguments`: nothing the SDK's JSON-RPC and
 * `tools/call` schemas would refuse, and no `_meta` (no progress token, trace context or
 * envelope). Anything else is null, and is served through the SDK as before.
 */
function plainCall(request: Request, body: unknown): PlainCall | null {
  const accept = request.headers.get("accept");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return null;
  if (!isJsonContentType(request.headers.get("content-type"))) return null;
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return null;
  if (!isPlainObject(body) || Object.keys(body).some((key) => !CALL_KEYS.has(key))) return null;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== "2.0" || method !== "tools/call") return null;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return null;
  if (!isPlainObject(params) || Object.keys(params).some((key) => !PARAMS_KEYS.has(key))) return null;
  const { name, arguments: args } = params;
  if (typeof name !== "string" || !(args === undefined || isPlainObject(args))) return null;
  return { id: id as string | number, tool: name, args: args ?? {} };
}

/**
 * A plain session call, answered without building the SDK's server and transport for it: the
 * same call as `createRunServer`'s `tools/call` handler makes, and the same answer the transport
 * gives in JSON mode (200, `{ result, jsonrpc, id }`; a failure the handler throws is the
 * JSON-RPC error the SDK's protocol layer makes of it). The result is `toCallToolResult`'s, whose
 * shape the SDK's `CallToolResult` schema accepts as it is, so its check is not repeated here.
 */
async function answerPlainCall(
  c: McpContext,
  agent: AgentPrincipal,
  claims: NonNullable<Awaited<ReturnType<typeof sessionOf>>>,
  call: PlainCall,
): Promise<Response> {
  const headers = { "Content-Type": "application/json" };
  let answer: Envelope | "over";
  try {
    const request = readCallBody({ tool: call.tool, args: call.args });
    answer = await callInSession(c.env, agent, claims, request, (name) => c.req.header(name));
  } catch (thrown) {
    const error = thrown as { code?: unknown; message?: string; data?: unknown };
    const code = Number.isSafeInteger(error.code) ? (error.code as number) : -32603;
    const data = error.data === undefined ? {} : { data: error.data };
    const message = error.message ?? "Internal error";
    return Response.json({ jsonrpc: "2.0", id: call.id, error: { code, message, ...data } }, { headers });
  }
  if (answer === "over") return sessionNotFound(call.id);
  return Response.json({ result: toCallToolResult(answer), jsonrpc: "2.0", id: call.id }, { headers });
}

/**
 * One `tools/call` without a progress token: its answer is one JSON body, made whole before it is
 * sent. A call asking for progress opens an event stream at once, and a batch may hold requests
 * that need no run: both are checked before they are served (`resumeSession`).
 */
function isLoneCall(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  return "method" in body && body.method === "tools/call" && !asksForProgress(body);
}

/**
 * 404 is how Streamable HTTP says a session is gone: the client starts a new one with `initialize`.
 * Forged, another agent's, ended, past its deadline and idle sessions all look the same.
 */
function sessionNotFound(id: JsonRpcId): Response {
  return rpcError(
    404,
    -32001,
    "Session not found: it ended, passed its deadline, sat idle too long or is not this agent's. Send initialize to open a new session.",
    id,
  );
}

function methodNotAllowed(c: McpContext) {
  c.header("Allow", "POST");
  return c.json(
    { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: use POST." }, id: null },
    405,
  );
}

/** Whether a message is a request, or a batch holds one: something an answer's body can answer. */
function holdsRequest(body: unknown): boolean {
  const one = (message: unknown) =>
    typeof message === "object" && message !== null && "method" in message && "id" in message;
  return Array.isArray(body) ? body.some(one) : one(body);
}

/**
 * Whether a parsed message has a field named `__proto__` at any depth. JSON.parse keeps one as an
 * ordinary field; every parse after it (the SDK's schemas among them) sets it as a prototype instead.
 */
function holdsPrototypeKey(message: unknown): boolean {
  const pending: unknown[] = [message];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (typeof node !== "object" || node === null) continue;
    if (!Array.isArray(node) && Object.hasOwn(node, "__proto__")) return true;
    pending.push(...Object.values(node));
  }
  return false;
}
