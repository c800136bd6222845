import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import type { Context } from "hono";
import type { AppEnv } from "../http/app-env";
import { catalog } from "../tools";
import { MAX_CALL_BODY_BYTES } from "../wire/requests";
import { asksForProgress } from "./message";
import { createRunServer, type RunServerContext } from "./server";

/**
 * One request of one run, through the SDK's stateless transport (no `sessionIdGenerator`). That
 * transport ignores an incoming `Mcp-Session-Id` (the session is checked before this, or with its call) and still
 * refuses an unsupported `MCP-Protocol-Version` header on every request but `initialize`.
 */
export async function serve(
  c: Context<AppEnv>,
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
