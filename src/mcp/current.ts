import { type CallToolResult, createMcpHandler, Server, type Tool } from "@modelcontextprotocol/server";
import type { AgentPrincipal } from "../auth/agent-keys";
import { readCallBody } from "../door/call-body";
import { type Caller, type HeaderReader, handleToolCall } from "../door/entry";
import type { Env } from "../env";
import { requestContext } from "../http/respond";
import { agentToolRefs } from "../runs/open-run";
import { callerOf, type RunClaims } from "../runs/pending-open";
import { USER_ASSERTION_HEADER, verifyUserAssertion } from "../runs/user-assertion";
import { runSpecs } from "../specs/tool-specs";
import { failure } from "../wire/envelope";
import { openRunBodySchema } from "../wire/requests";
import { toCallToolResult } from "./call-result";
import { canListen, catalogWatch, MAX_LISTENERS } from "./catalog-watch";
import { type JsonRpcId, requestIdOf, rpcError } from "./json-rpc";
import { RUN_HANDLE_ARG, signRunHandle, takeRunHandle } from "./run-handle";
import { INSTRUCTIONS } from "./server";
import { openAgentRun } from "./session";
import { declaresTasks, registerTaskHandlers, TASKS_EXTENSION, type TaskOwner, taskForWait } from "./tasks";
import { withMetaTraceparent } from "./trace-meta";

/**
 * `/mcp` for the 2026-07-28 revision: no handshake and no session, every request names its protocol
 * version and client capabilities in `_meta`. The SDK's per-request handler does the revision's
 * plumbing: `server/discover`, the `_meta` envelope, `Mcp-Method`/`Mcp-Name` checks (-32020),
 * unsupported versions (-32022), `resultType`, `ttlMs`/`cacheScope` and the server info on results.
 * `subscriptions/listen` is the SDK's listen router too, fed by the catalog watch (./catalog-watch.ts).
 * Built here: which run a call belongs to (a run token, or an agent's signed run handle minted by
 * `start_task`), approval waits as tasks, and `tasks/get`/`tasks/update`/`tasks/cancel` (the SDK has no runtime
 * for the tasks extension), and where tool changes come from (a catalog going live, never a call).
 */

/** Who is calling: a run token is its run; an agent names a run per call with a run handle. */
export type CurrentCaller = { kind: "run"; claims: RunClaims } | { kind: "agent"; agent: AgentPrincipal };

export interface CurrentContext {
  env: Env;
  caller: CurrentCaller;
  header: HeaderReader;
  /** The proxy's own host, which an identity provider's keys are never fetched from. */
  host: string;
  catalogVersion: string;
}

/** How long a client may reuse a listing: tools change only when a new catalog is deployed. */
const TOOLS_LIST_TTL_MS = 5 * 60 * 1000;

/** One request of the current revision, answered by the SDK's handler over a fresh server. */
export async function serveCurrent(
  request: Request,
  ctx: CurrentContext,
  maxRequestBodySize: number,
  /** The body, when the caller has read and parsed it already (the SDK then reads nothing). */
  parsedBody?: unknown,
): Promise<Response> {
  // The SDK checks that Mcp-Method names the body's method (-32020), so the header can be trusted here.
  if (request.headers.get("mcp-method") === "subscriptions/listen" && !canListen()) {
    return listenRefused(requestIdOf(parsedBody));
  }
  // "auto" answers with one JSON body unless a handler emits a message before its result, and ours
  // emit none; "json" would say so with a warning on every request. A listen stream is always SSE.
  const handler = createMcpHandler(() => createCurrentServer(ctx), {
    legacy: "reject",
    responseMode: "auto",
    maxRequestBodySize,
    bus: catalogWatch(ctx.env, listedSet(ctx.env, ctx.caller)),
  });
  return handler.fetch(request, parsedBody === undefined ? undefined : { parsedBody });
}

/** A listen this isolate has no room for, answered to its request (an unread body answers to none). */
function listenRefused(id: JsonRpcId): Response {
  const message = `Subscription limit reached: this isolate holds ${MAX_LISTENERS} listen streams. Listen again later, or list the tools again after tools/list's ttlMs.`;
  return rpcError(200, -32603, message, id);
}

const START_TASK = "start_task";

const START_TASK_TOOL: Tool = {
  name: START_TASK,
  title: "Start a task",
  description:
    "Opens a run for one task and returns its run_handle, run id, expiry and budget. Call it once per task, then pass run_handle to every other tool. " +
    "Pass the same task_key again to get the same run back (its budget is not renewed).",
  inputSchema: {
    type: "object",
    properties: {
      task_key: {
        type: "string",
        description: "Your id of the task; the same key answers the same run.",
      },
    },
    additionalProperties: false,
  },
  annotations: {
    title: "Start a task",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
};

function ownerOf(caller: CurrentCaller): TaskOwner {
  return caller.kind === "run"
    ? { tenant: caller.claims.tenant, principal: `run:${caller.claims.run}` }
    : { tenant: caller.agent.tenant, principal: `agent:${caller.agent.profile}` };
}

function createCurrentServer(ctx: CurrentContext): Server {
  const server = new Server(
    { name: "edge-tool-proxy", title: "Edge tool proxy", version: ctx.catalogVersion },
    {
      capabilities: { tools: { listChanged: true }, extensions: { [TASKS_EXTENSION]: {} } },
      instructions: INSTRUCTIONS,
      cacheHints: { "tools/list": { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: "private" } },
    },
  );
  server.setRequestHandler("tools/list", () => ({ tools: listing(ctx.env, ctx.caller) }));
  server.setRequestHandler("tools/call", async (request, extra) => {
    const args = request.params.arguments ?? {};
    const named = await runOfCall(ctx, request.params.name, args);
    if ("result" in named) return named.result;
    const envelope = await handleToolCall(
      ctx.env,
      named.caller,
      readCallBody({ tool: request.params.name, args: named.args }),
      withMetaTraceparent(ctx.header, request.params._meta),
    );
    if (declaresTasks(extra)) {
      const task = await taskForWait(ctx.env, ownerOf(ctx.caller), named.caller.run, envelope);
      if (task) return task as unknown as CallToolResult;
    }
    return toCallToolResult(envelope);
  });
  registerTaskHandlers(server, ctx.env, ownerOf(ctx.caller));
  return server;
}

/** The tools a caller lists: its run's as opened, or what an agent's runs open with. */
function listedSet(env: Env, caller: CurrentCaller): { namespace: string; tools: string[] | null } {
  return caller.kind === "run"
    ? { namespace: caller.claims.ns, tools: caller.claims.tools ?? null }
    : { namespace: caller.agent.namespace, tools: agentToolRefs(env, caller.agent) };
}

/** The run's namespace, in a stable order; an agent's adds `start_task` and `run_handle` on every tool. */
function listing(env: Env, caller: CurrentCaller): Tool[] {
  const set = listedSet(env, caller);
  const tools = [...(runSpecs(set, "mcp", "opened").tools as Tool[])].sort((a, b) =>
    a.name.localeCompare(b.name),
  );
  if (caller.kind === "run") return tools;
  return [START_TASK_TOOL, ...tools.map(withRunHandle)];
}

function withRunHandle(tool: Tool): Tool {
  const schema = tool.inputSchema;
  return {
    ...tool,
    inputSchema: {
      ...schema,
      properties: {
        ...(schema.properties ?? {}),
        [RUN_HANDLE_ARG]: {
          type: "string",
          description: "The run_handle start_task returned for this task.",
        },
      },
      required: [...(schema.required ?? []), RUN_HANDLE_ARG],
    },
  };
}

type NamedRun = { caller: Caller; args: unknown } | { result: CallToolResult };

/** The run a call belongs to: the run token's, or the one the agent's run handle names. */
async function runOfCall(
  ctx: CurrentContext,
  tool: string,
  args: Record<string, unknown>,
): Promise<NamedRun> {
  const { caller, env } = ctx;
  if (caller.kind === "run") {
    return { caller: callerOf(caller.claims), args };
  }
  if (tool === START_TASK) return { result: await startTask(ctx, caller.agent, args) };
  const taken = await takeRunHandle(env, caller.agent, args);
  if (!taken.ok) {
    const { code, message, problems } = taken;
    return {
      result: toCallToolResult(failure({ ...requestContext(env), tool }, { code, message, problems })),
    };
  }
  const { claims } = taken;
  return { caller: callerOf(claims), args: taken.args };
}

const StartTaskArgsSchema = openRunBodySchema().pick({ task_key: true }).strict();

/** `start_task`: opens a run exactly as a 2025 session's `initialize` does, and names it in a run handle. */
async function startTask(
  ctx: CurrentContext,
  agent: AgentPrincipal,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const { env } = ctx;
  const parsed = StartTaskArgsSchema.safeParse(args);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => ({
      field: issue.path.join(".") || "arguments",
      reason: issue.message,
      hint: "start_task takes only an optional task_key string.",
    }));
    return toCallToolResult(
      failure(
        { ...requestContext(env), tool: START_TASK },
        { code: "validation_error", message: "start_task's arguments are not valid.", problems },
      ),
    );
  }
  // Whom the task acts for: the orchestrator's header, as at POST /v1/runs, never an argument.
  const user = await verifyUserAssertion(env, agent.tenant, ctx.header(USER_ASSERTION_HEADER), ctx.host);
  if (!user.ok) return toCallToolResult(user.envelope);
  const opened = await openAgentRun(env, agent, parsed.data.task_key, user.user);
  if (!opened.ok) return toCallToolResult(opened.envelope);
  const run = opened.opened;
  const data = {
    run_handle: await signRunHandle(env, opened.claims),
    run_id: run.run_id,
    namespace: run.namespace,
    expires_at: run.expires_at,
    deadline_at: run.deadline_at,
    budget: run.budget,
    limits: run.limits,
    reused: opened.reused,
  };
  const text = `Run ${run.run_id} ${opened.reused ? "answered again for this task_key" : "opened"}. Pass run_handle to every tool call of this task. Budget: ${JSON.stringify(run.budget)}. Expires at ${run.expires_at}.`;
  return { content: [{ type: "text", text }], structuredContent: data };
}
