import type { Context } from "hono";
import type { AgentPrincipal } from "../auth/agent-keys";
import type { AppEnv } from "../http/app-env";
import { requestContext } from "../http/respond";
import { USER_ASSERTION_HEADER, verifyUserAssertion } from "../runs/user-assertion";
import { type Envelope, failure, httpStatusFor } from "../wire/envelope";
import { openRunBodySchema } from "../wire/requests";
import { type JsonRpcId, requestIdOf, rpcError, sessionNotFound } from "./json-rpc";
import { holdsInitialize, isLoneCall, type ReadMessage } from "./message";
import { answerPlainCall, plainCall } from "./plain-call";
import { serve } from "./sdk-transport";
import type { RunServerContext } from "./server";
import { callInSession, endSession, openReservedRun, openSession, resumeSession, sessionOf } from "./session";

/** The header a 2025 session's id rides in, named by `initialize`'s answer and sent on every later request. */
export const SESSION_HEADER = "mcp-session-id";

/** The header an agent's MCP session names its orchestrator's task in, as `task_key` of POST /v1/runs. */
const TASK_KEY_HEADER = "X-Task-Key";
const TaskKeySchema = openRunBodySchema().shape.task_key;

/**
 * A request with an agent's credential. The body is read here, once, because only `initialize`
 * may come without a session: its answer names the session (and its run) in `Mcp-Session-Id`.
 */
export async function serveAgent(
  c: Context<AppEnv>,
  agent: AgentPrincipal,
  read: Exclude<ReadMessage, { kind: "unread" }>,
): Promise<Response> {
  if (read.kind === "not-json") return rpcError(400, -32700, "Parse error: Invalid JSON", null);
  const body = read.body;
  const id = requestIdOf(body);
  if (holdsInitialize(body)) return initializeSession(c, agent, body, id);
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

/** `initialize`: a new session, whatever session id came along (the SDK client sends none on initialize). */
async function initializeSession(
  c: Context<AppEnv>,
  agent: AgentPrincipal,
  body: unknown,
  id: JsonRpcId,
): Promise<Response> {
  const taskKey = TaskKeySchema.safeParse(c.req.header(TASK_KEY_HEADER));
  if (!taskKey.success) {
    const problem = taskKey.error.issues[0]?.message ?? "not a task key";
    return rpcError(400, -32602, `${TASK_KEY_HEADER}: ${problem}.`, id);
  }
  // Whom the session's run acts for: the orchestrator's header, verified as at POST /v1/runs.
  const user = await verifyUserAssertion(
    c.env,
    agent.tenant,
    c.req.header(USER_ASSERTION_HEADER),
    new URL(c.req.url).host,
  );
  const opened = user.ok ? await openSession(c.env, agent, taskKey.data, user.user) : user;
  if (!opened.ok) {
    // The envelope rides along as the error's data: a rate limit's retry_after_ms, a limit's name.
    const error = opened.envelope.error;
    const response = rpcError(
      // A refused user assertion is a refused credential, 401 as at POST /v1/runs.
      user.ok ? httpStatusFor(opened.envelope) : 401,
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

/**
 * A session's request that is one `tools/call` answered as JSON: its session is checked by the
 * run's ledger with the call itself, in one request (`callInSession`), not before it. The answer is
 * whole before it is sent, so a session found over is still answered 404, with nothing called.
 */
async function serveSessionCall(
  c: Context<AppEnv>,
  agent: AgentPrincipal,
  sessionId: string,
  body: unknown,
  id: JsonRpcId,
): Promise<Response> {
  const claims = await sessionOf(c.env, agent, sessionId);
  if (!claims) return sessionNotFound(id);
  const plain = plainCall(c.req.raw, body);
  if (plain) {
    return answerPlainCall(plain, (request) =>
      callInSession(c.env, agent, claims, request, (name) => c.req.header(name)),
    );
  }
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
