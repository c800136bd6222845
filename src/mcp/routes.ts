import { isLegacyRequest } from "@modelcontextprotocol/server";
import { type Context, Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { catalog } from "../tools";
import { MAX_CALL_BODY_BYTES } from "../wire/requests";
import { authenticated } from "./authenticate";
import { serveCurrent } from "./current";
import { requestIdOf, rpcError, sessionNotFound } from "./json-rpc";
import { holdsPrototypeKey, holdsRequest, readMessage, withBody } from "./message";
import { ownOriginOnly } from "./origin";
import { MCP_PATH, PROTECTED_RESOURCE_PATH, protectedResourceMetadata } from "./protected-resource";
import { serve } from "./sdk-transport";
import { SESSION_HEADER, serveAgent } from "./serve-agent";
import { endSession, resumeSession } from "./session";

/**
 * `/mcp` (Streamable HTTP) and the metadata documents that tell clients how to reach it.
 *
 * Two revisions on one endpoint. 2025 clients: a run token is its run on every request; an agent's
 * `initialize` answers with an `Mcp-Session-Id` naming the session's run, which every later request
 * of the session carries; the run opens at the session's first `tools/call` (see `serve-agent.ts`
 * and `session.ts`). 2026-07-28 clients (no sessions) go to `current.ts`: a run token is its run,
 * an agent names its run in every call with the run handle `start_task` minted. Either way each
 * request gets a fresh server, and nothing survives it but what the run's ledger stores, so any
 * isolate can serve the next one.
 */
export const mcp = new Hono<AppEnv>();

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
      host: new URL(c.req.url).host,
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

function methodNotAllowed(c: Context<AppEnv>) {
  c.header("Allow", "POST");
  return c.json(
    { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: use POST." }, id: null },
    405,
  );
}
