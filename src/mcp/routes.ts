import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { Hono } from "hono";
import { loadConfig } from "../config/load";
import { failure } from "../envelope";
import type { AppEnv } from "../http/app-env";
import { requestContext, respond } from "../pipeline/respond";
import { MAX_CALL_BODY_BYTES } from "../routes/runs";
import { catalog } from "../tools";
import { authenticateMcp, MCP_PATH, PROTECTED_RESOURCE_PATH, protectedResourceMetadata } from "./auth";
import { createRunServer } from "./server";

/** `/mcp` (Streamable HTTP, stateless) and the metadata documents that tell clients how to reach it. */
export const mcp = new Hono<AppEnv>();

const metadata = (c: { req: { url: string } }) => protectedResourceMetadata(new URL(c.req.url).origin);
// Clients try the path-suffixed document first (RFC 9728 section 3.1), then the bare one.
mcp.get(PROTECTED_RESOURCE_PATH, (c) => c.json(metadata(c)));
mcp.get(`${PROTECTED_RESOURCE_PATH}${MCP_PATH}`, (c) => c.json(metadata(c)));

mcp.post(MCP_PATH, async (c) => {
  const config = loadConfig(c.env);
  const auth = await authenticateMcp(
    c.req.header("authorization"),
    config.runTokenKeys,
    new URL(c.req.url).origin,
  );
  if (!auth.ok) {
    c.header("WWW-Authenticate", auth.challenge);
    return respond(c, failure(requestContext(c.env), { code: "permission_error", message: auth.message }), {
      authFailure: true,
    });
  }
  const server = createRunServer({
    env: c.env,
    claims: auth.claims,
    header: (name) => c.req.header(name),
    catalogVersion: await catalog.version(),
  });
  // Stateless: no session id, one server and one transport per request, a JSON answer rather than
  // an SSE stream (there is nothing to stream: a call ends with one result).
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_CALL_BODY_BYTES,
  });
  await server.connect(transport);
  return transport.handleRequest(c.req.raw);
});

// A stateless server has no stream to open (GET) and no session to end (DELETE).
mcp.on(["GET", "DELETE"], MCP_PATH, (c) => {
  c.header("Allow", "POST");
  return c.json(
    { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: use POST." }, id: null },
    405,
  );
});
