import { Server } from "@modelcontextprotocol/server";
import type { RunTokenClaims } from "../auth/run-token";
import type { Env } from "../env";
import { type Envelope, type EnvironmentName, failure } from "../envelope";
import { structuralProblems } from "../http/limits";
import { newCallId } from "../http/respond";
import { admitCall } from "../ratelimit/admission";
import { ledgerFor } from "../routes/ledger-stub";
import type { FaultPlan } from "../scenarios/modes";
import { specsFor } from "../specs/formats";
import { catalog } from "../tools";
import { toCallToolResult } from "./call-result";

/** Everything one MCP request may touch: the run its token names, and nothing else. */
export interface RunServerContext {
  env: Env;
  claims: RunTokenClaims;
  environment: EnvironmentName;
  /** The orchestrator's intent nonce (`X-Call-Intent` header), as on the REST door. */
  intent: string | null;
  /** The orchestrator's one-call fault (`X-Sandbox-Fault`), where fault injection is on. */
  fault: FaultPlan | null;
  catalogVersion: string;
}

const INSTRUCTIONS =
  "Every tool result is an envelope: branch on outcome and error.code, follow error.recommended_next_action. " +
  "Writes and destructive calls are idempotent within this run: after an unclear failure, repeat the exact same call.";

/**
 * Stage "ledger" onwards, exactly as `POST /v1/runs/{id}/calls` reaches it: the run comes from the
 * token, never from the MCP session, so REST and MCP calls of one run share budgets and keys.
 */
async function callThroughLedger(ctx: RunServerContext, tool: string, args: unknown): Promise<Envelope> {
  const callId = newCallId();
  const { tenant, run } = ctx.claims;
  const base = { call_id: callId, environment: ctx.environment, tool };
  // The same edge guards as the REST door, in the same order: rate limit, then the structure of
  // what the caller controls; neither spends budget or reaches the ledger.
  const limited = await admitCall(ctx.env, tenant, run);
  if (limited) return failure(base, limited);
  const problems = structuralProblems(args ?? {});
  if (problems.length > 0) {
    return failure(base, {
      code: "validation_error",
      message: "The arguments break the proxy's input limits. Fix the fields listed in problems.",
      problems,
    });
  }
  try {
    return await ledgerFor(ctx.env, tenant, run).call({
      call_id: callId,
      tenant,
      // An absent `arguments` is an empty object, as an absent `args` is on the REST door, so both
      // doors derive the same idempotency key for the same call.
      request: { ok: true, tool, args: args ?? {} },
      intent: ctx.intent,
      fault: ctx.fault,
    });
  } catch (error) {
    // The ledger was reset or evicted mid-call. Its reservation survives, so a resend is safe.
    console.error("run ledger call failed (mcp)", error);
    return failure(
      { call_id: callId, environment: ctx.environment, tool },
      {
        code: "internal_error",
        message:
          "The run's ledger was interrupted. Call again with the same arguments; it cannot happen twice.",
      },
    );
  }
}

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
  server.setRequestHandler("tools/list", () => ({ tools: specsFor(catalog, ctx.claims.ns, "mcp").tools }));
  server.setRequestHandler("tools/call", async (request) =>
    toCallToolResult(await callThroughLedger(ctx, request.params.name, request.params.arguments)),
  );
  return server;
}
