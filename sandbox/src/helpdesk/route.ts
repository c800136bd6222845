import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { type Context, Hono } from "hono";
import { type AppEnv, requireCredential } from "../auth";
import { storeOf } from "../env";
import { faultResponse, isAnswerMode } from "../faults";
import { errorResponse } from "../http";
import { metaOf } from "../lifecycle";
import { chosenFault, deliver, hangBefore } from "./faults";
import { createHelpdeskServer, type HelpdeskContext } from "./server";

/**
 * `/mcp`: the helpdesk as a remote MCP server (Streamable HTTP). Every request carries the proxy's
 * per-request credential, as the REST endpoints do, issued for the audience `helpdesk` (the server,
 * not one tool: the credential's body digest already binds it to the one JSON-RPC message, tool
 * name and arguments included). Its `sub` is the tenant whose helpdesk the request sees.
 *
 * Both eras are served from one server definition: 2026-07-28 requests (a `_meta` envelope on every
 * message, no session) by the SDK's per-request handler; 2025-era requests by a stateless
 * transport behind sessions the store remembers, so `initialize` opens one and a forgotten one is
 * a 404.
 */
export const HELPDESK_AUDIENCE = "helpdesk";
export const MCP_PATH = "/mcp";
const SESSION_HEADER = "mcp-session-id";

export const helpdeskMcp = new Hono<AppEnv>();

helpdeskMcp.post(MCP_PATH, requireCredential(HELPDESK_AUDIENCE), serveWithFaults);

// No stream to open: every answer comes back on its POST.
helpdeskMcp.get(MCP_PATH, requireCredential(HELPDESK_AUDIENCE), () => methodNotAllowed());

// A 2025 client ends its session; the id answers 404 from then on.
helpdeskMcp.delete(MCP_PATH, requireCredential(HELPDESK_AUDIENCE), async (c) => {
  const sessionId = c.req.header(SESSION_HEADER);
  if (!sessionId) return rpcError(400, -32000, "Bad Request: DELETE needs the Mcp-Session-Id to end.");
  const forgotten = await storeOf(c.env).forgetHelpdeskSessions(c.get("caller").tenant, sessionId);
  return forgotten > 0 ? c.body(null, 200) : sessionNotFound();
});

/** The request's fault, as on the REST endpoints: before the server, around it, or after it. */
async function serveWithFaults(c: Context<AppEnv>): Promise<Response> {
  const caller = c.get("caller");
  const store = storeOf(c.env);
  const meta = metaOf(c, caller);
  const chosen = chosenFault((name) => c.req.header(name));
  if (!chosen.ok) {
    await store.finish(meta, null, 400, null);
    return errorResponse(400, "invalid_request", chosen.message);
  }
  const { seq, fault } = await store.admit(meta, [], chosen.plan);
  if (fault && isAnswerMode(fault.mode)) return faultResponse({ ...fault, mode: fault.mode }, meta);
  const hangMs = hangBefore(fault);
  if (hangMs > 0) await scheduler.wait(hangMs);
  const answer = await serve(c, await c.req.text());
  await store.finish(meta, seq, chosen.after === "error_after_effect" ? 500 : answer.status, null);
  return deliver(answer, fault, chosen.after, meta);
}

async function serve(c: Context<AppEnv>, raw: string): Promise<Response> {
  const caller = c.get("caller");
  const store = storeOf(c.env);
  // The credential check read the body; the SDK reads it again from a request of its own.
  const request = new Request(c.req.url, { method: "POST", headers: c.req.raw.headers, body: raw });
  const ctx: HelpdeskContext = {
    store,
    caller,
    idempotencyHeader: c.req.header("idempotency-key"),
    drifts: await store.helpdeskDrifts(caller.tenant),
    legacy: false,
    announce: false,
  };
  if (!(await isLegacyRequest(request))) {
    const modern = createMcpHandler(() => createHelpdeskServer(ctx), {
      legacy: "reject",
      responseMode: "json",
    });
    return modern.fetch(request);
  }
  ctx.legacy = true;
  if (isInitialize(raw)) {
    const sessionId = await store.openHelpdeskSession(caller.tenant);
    const answer = await serveLegacy(request, ctx);
    // The transport refused the handshake (headers, a batch): no session was opened after all.
    if (!answer.ok) {
      await store.forgetHelpdeskSessions(caller.tenant, sessionId);
      return answer;
    }
    const headers = new Headers(answer.headers);
    headers.set(SESSION_HEADER, sessionId);
    return new Response(answer.body, { status: answer.status, headers });
  }
  const sessionId = c.req.header(SESSION_HEADER);
  if (!sessionId) {
    return rpcError(
      400,
      -32000,
      "Bad Request: no Mcp-Session-Id. Send initialize first, or use the 2026-07-28 revision.",
    );
  }
  if (!(await store.isHelpdeskSessionKnown(caller.tenant, sessionId))) return sessionNotFound();
  const method = toolsMethodOf(raw);
  if (method) ctx.announce = await store.helpdeskToolsNews(caller.tenant, sessionId, method);
  return serveLegacy(request, ctx);
}

/** One 2025-era request, by a fresh server over the SDK's stateless transport. */
async function serveLegacy(request: Request, ctx: HelpdeskContext): Promise<Response> {
  const server = createHelpdeskServer(ctx);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    // A JSON answer carries nothing but the result: a change is told on an event stream.
    enableJsonResponse: !ctx.announce,
  });
  await server.connect(transport);
  return transport.handleRequest(request);
}

/** `tools/list` or `tools/call` when the request is one of them (not a batch), else null. */
function toolsMethodOf(raw: string): "tools/list" | "tools/call" | null {
  try {
    const method = (JSON.parse(raw) as { method?: unknown }).method;
    return method === "tools/list" || method === "tools/call" ? method : null;
  } catch {
    return null;
  }
}

function isInitialize(raw: string): boolean {
  try {
    const body: unknown = JSON.parse(raw);
    return Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);
  } catch {
    return false;
  }
}

/** How Streamable HTTP says a session is gone: the client initializes a new one. */
function sessionNotFound(): Response {
  return rpcError(
    404,
    -32001,
    "Session not found: it ended or the server forgot it. Send initialize to open a new one.",
  );
}

function methodNotAllowed(): Response {
  const response = rpcError(405, -32000, "Method not allowed: use POST.");
  response.headers.set("Allow", "POST, DELETE");
  return response;
}

function rpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}
