import * as z from "zod";
import { ApprovalFiltersSchema, RunFiltersSchema } from "../approvals/list-filters";
import { catalog } from "../tools";
import { MetricsQuerySchema } from "../wire/metrics";
import { resultPageQuerySchema, toolsQuerySchema, traceQuerySchema } from "../wire/requests";
import { type JsonSchema, withoutDialect } from "./json-schema";
import { type DataComponent, type ToolAnswer, toolOutputComponents } from "./openapi-components";

/**
 * Every route of the proxy's HTTP API, as data the OpenAPI document and the docs page are built
 * from. A route added to the app must be added here too: test/workerd/openapi.test.ts compares this list
 * with the routes the app really serves, both ways.
 */

export type Credential = "tenantKey" | "runToken" | "operatorKey" | "agentKey" | "oauth";
type Method = "get" | "post" | "delete";

export interface Operation {
  method: Method;
  path: string;
  summary: string;
  description: string;
  tag: "runs" | "approvals" | "metrics" | "tools" | "mcp" | "meta";
  /** Any one of these is accepted; empty means no credential. */
  credentials: readonly Credential[];
  parameters?: JsonSchema[];
  body?: { schema: string; description: string };
  responses: Record<string, JsonSchema>;
  /**
   * Set, to say why, when the operation's success answers are not envelopes: a protocol or a
   * standard defines their shape (MCP, RFC metadata, this document, HTML). Every other success
   * answer is an envelope whose `data` names its schema; test/workerd/openapi.test.ts checks both.
   */
  notEnvelope?: string;
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export function zodSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  return withoutDialect(z.toJSONSchema(schema, { io, target: "draft-2020-12" }) as JsonSchema);
}

/**
 * An answer whose body is the envelope: the proxy's one response shape. `data` names the component
 * of a success's payload (openapi-components.ts), and is then required so generated clients type
 * it as present; failures carry `data: null`.
 */
function envelope(description: string, data?: DataComponent): JsonSchema {
  const schema = data
    ? { allOf: [ref("Envelope"), { type: "object", required: ["data"], properties: { data: ref(data) } }] }
    : ref("Envelope");
  return { description, content: { "application/json": { schema } } };
}

/**
 * A tool call's success: the envelope of one of the catalog's tools, told apart by `tool`, with
 * `data` that tool's shaped output, or a LargeResult (summary and handle) when the output is too
 * large to return inline. `tool` makes the branches exclusive, so `oneOf` holds; a generated
 * client gets a union it narrows by checking `tool`.
 */
function toolCallSuccess(description: string, answers: readonly ToolAnswer[]): JsonSchema {
  const oneOf = answers.map(({ tool, namespaces, outputs }) => ({
    title: tool,
    description: `A call of \`${tool}\` (namespace ${namespaces.join(", ")}).`,
    allOf: [
      ref("Envelope"),
      {
        type: "object",
        required: ["tool", "data"],
        properties: {
          tool: { const: tool },
          data: { anyOf: [...outputs.map(ref), ref("LargeResult")] },
        },
      },
    ],
  }));
  return { description, content: { "application/json": { schema: { oneOf } } } };
}

const FAILURES = {
  "401": envelope("Missing or invalid credential (`permission_error`); `WWW-Authenticate` says which."),
  "403": envelope("The credential may not do this (`permission_error`)."),
  "404": envelope("No such run, or its data has expired (`not_found`)."),
};

const runId: JsonSchema = {
  name: "run_id",
  in: "path",
  required: true,
  schema: { type: "string" },
  description: "The run_id returned by POST /v1/runs.",
};

const approvalId: JsonSchema = {
  name: "id",
  in: "path",
  required: true,
  schema: { type: "string" },
  description: "The approval id, from the agent's approval_required envelope or the list.",
};

/** Query parameters from a strict zod object: one parameter per field, with its description. */
function queryParameters(schema: z.ZodObject<z.ZodRawShape>): JsonSchema[] {
  const json = zodSchema(schema, "input");
  const required = new Set(Array.isArray(json.required) ? json.required : []);
  return Object.entries(json.properties as Record<string, JsonSchema>).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: "query", required: required.has(name), description, schema: rest };
  });
}

export const OPERATIONS: readonly Operation[] = [
  {
    method: "get",
    path: "/healthz",
    tag: "meta",
    summary: "Liveness",
    description:
      "Environment name, catalog version and namespaces. A misconfigured proxy answers 500 and says why.",
    credentials: [],
    responses: {
      "200": envelope("The proxy is up.", "Health"),
      "500": envelope("The proxy is misconfigured."),
    },
  },
  {
    method: "post",
    path: "/v1/runs",
    tag: "runs",
    summary: "Open a run",
    description:
      "Opens a run in one namespace of the tenant. Returns run_id, run_token (short-lived, scoped to this run and namespace), expires_at, environment, limits and the run's tools in the jsonschema format: the namespace's, or with `tools` only that subset plus find_tools and use_tool. With an agent key the run gets the key's agent profile: its namespace, and its limits (a request may ask for less, never more). With a task_key, opening is idempotent: the same key and body answer the same run.",
    credentials: ["tenantKey", "agentKey"],
    body: {
      schema: "OpenRunBody",
      description: "Namespace and optional limits within the tenant's ceilings.",
    },
    responses: {
      "200": envelope(
        "The run this task_key opened before, answered again with a valid run token (`reused: true`).",
        "RunOpened",
      ),
      "201": envelope("The run is open.", "RunOpened"),
      "401": FAILURES["401"],
      "404": envelope("The namespace is not available to this tenant (`not_found`)."),
      "409": envelope(
        "This task_key opened a run with another body (`conflict_error`, naming the differing fields); nothing is opened.",
      ),
      "422": envelope("Invalid body or a limit above the tenant's ceiling (`validation_error`)."),
    },
  },
  {
    method: "get",
    path: "/v1/runs",
    tag: "runs",
    summary: "List and search runs (operators)",
    description:
      "One page of the tenant's runs, newest first, for an operator: by state (open, closed, expired: open past its deadline; default all), tool called, subject named (an id from the arguments: `A1002`, or `order_id=A1002`) and opening time. Pass `next_cursor` back as `cursor`, with the same filters, for the next page.",
    credentials: ["operatorKey"],
    parameters: queryParameters(RunFiltersSchema),
    responses: {
      "200": envelope("One page of runs.", "RunList"),
      "401": FAILURES["401"],
      "403": FAILURES["403"],
      "422": envelope(
        "An unknown state or parameter, a bad date or cursor, or a limit out of range (`validation_error`).",
      ),
    },
  },
  {
    method: "get",
    path: "/v1/runs/{run_id}",
    tag: "runs",
    summary: "Run status",
    description: "State (open, closed, expired), counters, limits and budget left.",
    credentials: ["runToken"],
    parameters: [runId],
    responses: { "200": envelope("The run's status.", "RunStatus"), ...FAILURES },
  },
  {
    method: "post",
    path: "/v1/runs/{run_id}/calls",
    tag: "runs",
    summary: "Call a tool",
    description:
      "Runs the whole pipeline: validate, policy, ledger (budgets, repeats, idempotency key), dispatch, classify, shape, record. The HTTP status mirrors the envelope's outcome; a replay carries `Idempotent-Replayed: true`.",
    credentials: ["runToken"],
    parameters: [
      runId,
      {
        name: "X-Call-Intent",
        in: "header",
        required: false,
        schema: { type: "string" },
        description:
          "An orchestrator's nonce that makes two identical writes distinct. Never let the model set it.",
      },
      {
        name: "traceparent",
        in: "header",
        required: false,
        schema: { type: "string" },
        description:
          "W3C Trace Context of the caller: the call's span becomes a child of it (trace export), and the upstream request carries a traceparent of the same trace with the call's span id. A malformed one is ignored; the call starts its own span in the run's trace.",
      },
    ],
    body: { schema: "CallBody", description: "The tool and its arguments." },
    responses: {
      "200": toolCallSuccess(
        "The tool succeeded (or a stored success was replayed). `tool` names the tool and `data` is its shaped output (masked, fenced, whitelisted): one schema per tool of the catalog, or a `LargeResult` (a summary and a handle to page through) when the output is too large to return inline. A run sees only its namespace's tools; `GET /v1/tools?format=mcp` lists them, each with its `outputSchema`: this envelope with `data` narrowed to the tool's output.",
        toolOutputComponents(catalog.all()).answers,
      ),
      "409": envelope("Repeat detected, run closed, conflict, or approval required."),
      "422": envelope("The call or its arguments are invalid; see error.problems."),
      "4XX": envelope("Another failure of the call; see error.code."),
      "5XX": envelope("An upstream or proxy failure; see error.retryable and error.side_effect_confirmed."),
      "401": FAILURES["401"],
    },
  },
  {
    method: "get",
    path: "/v1/runs/{run_id}/trace",
    tag: "runs",
    summary: "Run trace",
    description:
      "The run's dispatches in order, a page at a time (`cursor`, `limit`; each page costs the same however long the run). `Accept: application/x-ndjson` streams the whole trace, one entry per line; `?format=otlp` streams it as OTLP/JSON spans.",
    credentials: ["runToken"],
    parameters: [runId, ...queryParameters(traceQuerySchema())],
    responses: { "200": envelope("The run and its trace entries.", "RunTrace"), ...FAILURES },
  },
  {
    method: "get",
    path: "/v1/runs/{run_id}/results/{handle}",
    tag: "runs",
    summary: "Page of a large result",
    description:
      "One page of a result too large for the envelope; the envelope names its handle. Start at `cursor=0`, then follow each page's next_cursor.",
    credentials: ["runToken"],
    parameters: [
      runId,
      {
        name: "handle",
        in: "path",
        required: true,
        schema: { type: "string" },
        description: "The result handle from the call's envelope.",
      },
      ...queryParameters(resultPageQuerySchema()),
    ],
    responses: {
      "200": envelope("One page.", "ResultPage"),
      "422": envelope("The cursor is not a page number."),
      ...FAILURES,
    },
  },
  {
    method: "post",
    path: "/v1/runs/{run_id}/tools",
    tag: "runs",
    summary: "Add granted tools to a run",
    description:
      "Adds tools the tenant grants (as find_tools names them) to the run: from then on GET /v1/tools lists them and the run calls them directly. An MCP listing keeps the tools the run opened with. A tool outside the grants is refused and nothing is added.",
    credentials: ["runToken"],
    parameters: [runId],
    body: { schema: "AddRunToolsBody", description: "The tools to add." },
    responses: {
      "200": envelope("The run's tools now, in the jsonschema format.", "NamespaceSpecs"),
      "401": FAILURES["401"],
      "404": envelope("The run's data has expired (`not_found`)."),
      "409": envelope("The run has ended (`run_closed`)."),
      "422": envelope("A tool that is unknown or not granted to the tenant (`validation_error`, located)."),
    },
  },
  {
    method: "post",
    path: "/v1/runs/{run_id}/end",
    tag: "runs",
    summary: "End a run",
    description: "Closes the run: later calls answer `run_closed`. Data is kept 24 hours.",
    credentials: ["runToken"],
    parameters: [runId],
    responses: { "200": envelope("The run's final status.", "RunStatus"), ...FAILURES },
  },
  {
    method: "get",
    path: "/v1/approvals",
    tag: "approvals",
    summary: "List and search approvals",
    description:
      "One page of the tenant's approvals, newest first: by state (default pending, or all), tool, subject (an id from the arguments: `A1002`, or `order_id=A1002`), run and creation time. Pass `next_cursor` back as `cursor`, with the same filters, for the next page.",
    credentials: ["operatorKey"],
    parameters: queryParameters(ApprovalFiltersSchema),
    responses: {
      "200": envelope("One page of approvals.", "ApprovalList"),
      "401": FAILURES["401"],
      "403": FAILURES["403"],
      "422": envelope(
        "An unknown state or parameter, a bad date or cursor, or a limit out of range (`validation_error`).",
      ),
    },
  },
  {
    method: "get",
    path: "/v1/approvals/{id}",
    tag: "approvals",
    summary: "One approval",
    description: "The approval with its run and the run's trace, so an operator decides with context.",
    credentials: ["operatorKey"],
    parameters: [approvalId],
    responses: {
      "200": envelope("The approval, run and trace.", "ApprovalDetail"),
      "401": FAILURES["401"],
      "404": FAILURES["404"],
    },
  },
  ...(["approve", "reject"] as const).map(
    (decision): Operation => ({
      method: "post",
      path: `/v1/approvals/{id}/${decision}`,
      tag: "approvals",
      summary: decision === "approve" ? "Approve a call" : "Reject a call",
      description:
        decision === "approve"
          ? 'Approves the held call; the agent\'s next identical call executes it exactly once. Body `{ "reason"?: string }`.'
          : 'Rejects the held call; the agent is told the reason. Body `{ "reason": string }`.',
      credentials: ["operatorKey"],
      parameters: [approvalId],
      responses: {
        "200": envelope(
          'The decided approval; one that needs two approvers stays `pending` after the first approval ("1 of 2": its `approvers`).',
          "ApprovalDecision",
        ),
        "401": FAILURES["401"],
        "403": envelope(
          "The operator's key holds none of the approval's `approver_roles` (`permission_error`, `details.roles` names them); or a credential that is not an operator key.",
        ),
        "404": FAILURES["404"],
        "409": envelope(
          "Already decided or expired, or already approved by the same person (`conflict_error`).",
        ),
        "422": envelope("Invalid body."),
      },
    }),
  ),
  {
    method: "get",
    path: "/v1/metrics",
    tag: "metrics",
    summary: "The health of the tenant's agents",
    description:
      "Per namespace and bucket (minute, hour or day; at most 500 buckets over at most 8 days, the last 24 hours by hour when omitted): calls, success, retryable and terminal failures, invalid calls (validation and policy refusals), loops (repeat breaker), escalations (answered with an approval pending), approvals asked, approved, rejected and expired with their wait, replays and duplicate effects prevented, with the rates derived from them. Every bucket of the range is listed, empty ones with 0. Production reads Workers Analytics Engine, which samples at high volume; the sandbox counts exactly.",
    credentials: ["operatorKey"],
    parameters: queryParameters(MetricsQuerySchema),
    responses: {
      "200": envelope("The tenant's metrics.", "MetricsReport"),
      "401": FAILURES["401"],
      "403": FAILURES["403"],
      "422": envelope(
        "A bad date, a range over 8 days or 500 buckets, an unknown bucket, parameter or namespace (`validation_error`).",
      ),
      "500": envelope(
        "Metrics reading is not configured: METRICS_ACCOUNT_ID or METRICS_API_TOKEN is missing.",
      ),
      "503": envelope("The metrics source did not answer; retry shortly (`transient_error`)."),
    },
  },
  {
    method: "get",
    path: "/v1/value-usage",
    tag: "metrics",
    summary: "Value moved today against the tenant's caps",
    description:
      "For each currency the tenant caps (`value_caps`), today's UTC totals over its effect shards: the daily cap, the value confirmed (`used`), reserved by calls whose effect is not yet confirmed (`reserved`), and approved beyond a cap by an operator (`overrides`).",
    credentials: ["operatorKey"],
    responses: {
      "200": envelope("The tenant's value usage today.", "ValueUsageReport"),
      "401": FAILURES["401"],
      "403": FAILURES["403"],
    },
  },
  {
    method: "get",
    path: "/v1/tools",
    tag: "tools",
    summary: "Tool specs for an agent framework",
    description:
      "Ready-to-paste specs of one namespace, generated from the tools' zod schemas, with an approximate token cost. A run token sees only its own namespace; a tenant key the namespaces of its config. Any other namespace is `not_found`.",
    credentials: ["tenantKey", "runToken"],
    parameters: queryParameters(toolsQuerySchema()),
    responses: {
      "200": envelope("The specs.", "NamespaceSpecs"),
      "401": FAILURES["401"],
      "404": envelope("The namespace is not available to this caller (`not_found`)."),
      "422": envelope("Unknown format, unknown parameter or missing namespace (`validation_error`)."),
    },
  },
  {
    method: "post",
    path: "/mcp",
    tag: "mcp",
    summary: "MCP Streamable HTTP endpoint",
    description:
      "JSON-RPC 2.0 over Streamable HTTP, JSON answers. With a run token: stateless, every request is a call in that run. With an agent key or an OAuth access token: `initialize` answers with an `Mcp-Session-Id` naming the session's run, which every later request of the session sends (with the same key or token); the run opens with the agent profile at the session's first `tools/call` (listing needs no run); an unknown, ended, idle or past-deadline session answers 404 so the client initializes again. `tools/list` lists the run's namespace; `tools/call` runs the same pipeline as POST /v1/runs/{run_id}/calls and returns the envelope as `structuredContent` (`isError: true` unless the outcome is success). Protocol errors are JSON-RPC errors.",
    credentials: ["runToken", "agentKey", "oauth"],
    notEnvelope: "MCP Streamable HTTP: JSON-RPC messages, as the MCP specification defines them.",
    body: { schema: "JsonRpcMessage", description: "One JSON-RPC request or notification." },
    responses: {
      "200": {
        description: "A JSON-RPC response.",
        content: { "application/json": { schema: ref("JsonRpcMessage") } },
      },
      "202": { description: "A notification was accepted." },
      "400": {
        description:
          "Not JSON or not JSON-RPC, or an agent's request other than `initialize` without a session: a JSON-RPC error.",
      },
      "404": {
        description: "The session is unknown, ended, idle or past its run's deadline: initialize again.",
      },
      "401": {
        ...FAILURES["401"],
        headers: {
          "WWW-Authenticate": {
            schema: { type: "string" },
            description: "Bearer with resource_metadata pointing at the protected-resource metadata.",
          },
        },
      },
    },
  },
  {
    method: "get",
    path: "/mcp",
    tag: "mcp",
    summary: "No server-initiated stream",
    description: "Calls end with one result each, so there is no server-initiated stream to open.",
    credentials: [],
    responses: { "405": { description: "Method not allowed: a JSON-RPC error." } },
  },
  {
    method: "delete",
    path: "/mcp",
    tag: "mcp",
    summary: "End an MCP session",
    description:
      "With an agent key or OAuth token and the session's `Mcp-Session-Id`: ends the session's run (a session that never made a tool call has none: 200, nothing ended). Without a session (a run token's stateless use) there is nothing to end.",
    credentials: ["agentKey", "oauth"],
    notEnvelope: "MCP Streamable HTTP: ending a session answers an empty body.",
    responses: {
      "200": { description: "The session's run is ended (empty body)." },
      "404": { description: "No such live session." },
      "405": { description: "No session to end: a JSON-RPC error." },
    },
  },
  ...["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"].map(
    (path): Operation => ({
      method: "get",
      path,
      tag: "mcp",
      summary: "Protected-resource metadata (RFC 9728)",
      description:
        "Tells MCP clients how /mcp is authorized: a bearer run token or agent key in the Authorization header, or OAuth through the authorization server it names. Not an envelope: the RFC defines the shape.",
      credentials: [],
      notEnvelope: "RFC 9728 defines the metadata document.",
      responses: { "200": { description: "The metadata document.", content: { "application/json": {} } } },
    }),
  ),
  {
    method: "get",
    path: "/.well-known/jwks.json",
    tag: "meta",
    summary: "Upstream credential keys (RFC 7517)",
    description:
      "The public keys the proxy signs upstream credentials with, as a JWK Set, for upstreams to verify them: every configured key, retired ones included, public members only. Cacheable for a few minutes. Not an envelope: the RFC defines the shape.",
    credentials: [],
    notEnvelope: "RFC 7517 defines the JWK Set.",
    responses: { "200": { description: "The JWK Set.", content: { "application/json": {} } } },
  },
  {
    method: "get",
    path: "/openapi.json",
    tag: "meta",
    summary: "This document",
    description:
      "The OpenAPI 3.1 description of the proxy's HTTP API. `servers` names the origin the document was requested from.",
    credentials: [],
    notEnvelope: "An OpenAPI document.",
    responses: { "200": { description: "OpenAPI 3.1 JSON.", content: { "application/json": {} } } },
  },
  {
    method: "get",
    path: "/docs",
    tag: "meta",
    summary: "API documentation page",
    description: "This document as a self-contained HTML page (no scripts, no external resources).",
    credentials: [],
    notEnvelope: "An HTML page for people.",
    responses: { "200": { description: "HTML.", content: { "text/html": {} } } },
  },
];

/**
 * Paths served for people, not programs: the operator console and the OAuth consent page are
 * server-rendered HTML behind a sign-in cookie and CSRF tokens, documented in docs/console.md rather
 * than as an API. (OAuth's own endpoints describe themselves in its authorization-server metadata.)
 */
export const UNDOCUMENTED_PREFIXES = ["/console", "/authorize"] as const;

/** The methods and paths the document describes, for checking it against the app's routes. */
export function documentedRoutes(): Array<{ method: string; path: string }> {
  return OPERATIONS.map(({ method, path }) => ({ method: method.toUpperCase(), path }));
}
