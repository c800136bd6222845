import { Server } from "@modelcontextprotocol/server";
import { readCallBody } from "../door/call-body";
import { type Caller, type HeaderReader, handleToolCall } from "../door/entry";
import { MAX_WAIT_S } from "../door/prefer-wait";
import type { Env } from "../env";
import type { CallRequest } from "../machine/prepare";
import { callerOf, type RunClaims } from "../runs/pending-open";
import { runSpecs } from "../specs/tool-specs";
import type { Envelope } from "../wire/envelope";
import { toCallToolResult } from "./call-result";
import { withMetaTraceparent } from "./trace-meta";

/** Everything one MCP request may touch: the run its credential names, and nothing else. */
export interface RunServerContext {
  env: Env;
  /** From a verified run token, or from an agent's verified session id (whose run the session is). */
  claims: RunClaims;
  /** The HTTP request's headers: the orchestrator's `X-Call-Intent` and `X-Sandbox-Fault`, as on REST. */
  header: HeaderReader;
  catalogVersion: string;
  /**
   * For a session whose run is reserved, not open yet: opens it (once, however many calls ask) and
   * answers null, or the refusal. Only `tools/call` asks: listing and everything else need no run.
   */
  openRun?: () => Promise<Envelope | null>;
  /**
   * How a call is made, when not as a run token's (`handleToolCall`): a session's call checks its
   * session with the call itself (`callInSession`).
   */
  callTool?: (caller: Caller, request: CallRequest, header: HeaderReader) => Promise<Envelope>;
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
  // A refused open (the run-open rate limit, a profile changed since) is the call's answer, as a
  // tool error the model reads like any refused call's; nothing ran, and a later call tries again.
  server.setRequestHandler("tools/call", async (request, call) => {
    const refused = (await ctx.openRun?.()) ?? null;
    if (refused) return toCallToolResult(refused);
    const caller = callerOf(ctx.claims);
    const body = readCallBody({ tool: request.params.name, args: request.params.arguments ?? {} });
    const header = withMetaTraceparent(ctx.header, request.params._meta);
    const callTool = ctx.callTool ?? ((...args) => handleToolCall(ctx.env, ...args));
    const answer = await callTool(caller, body, header);
    // A client that sent a progress token may wait for a pending approval's decision instead of
    // polling (the 2025 revisions' way; 2026-07-28 clients wait through the tasks extension): it is
    // told what it waits for, then the identical call waits for the decision as `Prefer: wait` does.
    const token = call.mcpReq._meta?.progressToken;
    const approval = answer.approval;
    if (token === undefined || answer.error?.code !== "approval_required" || approval?.state !== "pending") {
      return toCallToolResult(answer);
    }
    await call.mcpReq.notify({
      method: "notifications/progress",
      params: {
        progressToken: token,
        progress: 0,
        message: `Approval ${approval.id} is waiting for a human; this request waits up to ${MAX_WAIT_S} s for the decision.`,
      },
    });
    const waitForDecision: HeaderReader = (name) =>
      name.toLowerCase() === "prefer" ? `wait=${MAX_WAIT_S}` : header(name);
    return toCallToolResult(await callTool(caller, body, waitForDecision));
  });
  return server;
}
