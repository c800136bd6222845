import { Server } from "@modelcontextprotocol/server";
import type { RunTokenClaims } from "../auth/run-token";
import { readCallBody } from "../door/call-body";
import { type HeaderReader, handleToolCall } from "../door/entry";
import type { Env } from "../env";
import { runSpecs } from "../specs/tool-specs";
import { toCallToolResult } from "./call-result";
import { withMetaTraceparent } from "./trace-meta";

/** Everything one MCP request may touch: the run its credential names, and nothing else. */
export interface RunServerContext {
  env: Env;
  /** From a verified run token, or from an agent's verified session id (whose run the session is). */
  claims: Pick<RunTokenClaims, "tenant" | "run" | "ns" | "tools">;
  /** The HTTP request's headers: the orchestrator's `X-Call-Intent` and `X-Sandbox-Fault`, as on REST. */
  header: HeaderReader;
  catalogVersion: string;
}

export const INSTRUCTIONS =
  "Every tool result is an envelope: branch on outcome and error.code, follow error.recommended_next_action. " +
  "Writes and destructive calls are idempotent within this run: after an unclear failure, repeat the exact same call.";

/**
 * A fresh MCP server for one HTTP request of one run. Stateless by design: nothing survives the
 * request but what the run's ledger stores, so any isolate can serve the next request.
 */
export function createRunServer(ctx: RunServerContext): Server {
  const server = new Server(
    { name: "edge-tool-proxy", title: "Edge tool proxy", version: ctx.catalogVersion },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  // Only the run's namespace exists for this server: other namespaces' tools are neither listed
  // nor callable (the ledger resolves names within the run's namespace and answers not_found).
  // A run opened with a subset lists exactly it (and find_tools, use_tool), as its credential names it.
  server.setRequestHandler("tools/list", () => ({
    tools: runSpecs({ namespace: ctx.claims.ns, tools: ctx.claims.tools ?? null }, "mcp", "opened").tools,
  }));
  // The run comes from the verified credential, never from the request body, and the call takes the
  // same entry as `POST /v1/runs/{id}/calls`: budgets, keys, approvals and trace are a REST run's.
  server.setRequestHandler("tools/call", async (request) =>
    toCallToolResult(
      await handleToolCall(
        ctx.env,
        { tenant: ctx.claims.tenant, run: ctx.claims.run, namespace: ctx.claims.ns },
        readCallBody({ tool: request.params.name, args: request.params.arguments ?? {} }),
        withMetaTraceparent(ctx.header, request.params._meta),
      ),
    ),
  );
  return server;
}
