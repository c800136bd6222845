import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { parseCallBody, readCallBody } from "../door/call-body";
import { handleToolCall } from "../door/entry";
import type { AppEnv } from "../http/app-env";
import { requireRunOpener, requireRunToken } from "../http/authenticate";
import { limitJsonBody } from "../http/limits";
import { requestContext, respond } from "../http/respond";
import { tooLarge } from "../http/too-large";
import { jsonBody, validated } from "../http/validation-hook";
import { ledgerFor } from "../ledger/client";
import { openRunFor } from "../runs/open-run";
import { askRun, callerOf } from "../runs/pending-open";
import { USER_ASSERTION_HEADER, verifyUserAssertion } from "../runs/user-assertion";
import { defineOperation, envelope, FAILURES, RUN_ID, routeOf, toolCallSuccess } from "../specs/operation";
import { runSpecs } from "../specs/tool-specs";
import { CallBodySchema } from "../wire/call-body";
import { failure, success } from "../wire/envelope";
import {
  addRunToolsBodySchema,
  MAX_CALL_BODY_BYTES,
  openRunBodySchema,
  resultPageQuerySchema,
  traceQuerySchema,
} from "../wire/requests";
import { ndjsonExport, otlpExport } from "./trace-export";

export const runs = new Hono<AppEnv>();

/** Where `runs` is mounted (src/app.ts). */
const MOUNT = "/v1/runs";

/** Whether the run's ledger found the run: an answer of a ledger without one is null. */
const found = (answer: unknown) => answer !== null;

/** The call body `limitJsonBody` already parsed; undefined when it was not JSON (then parsed here, to say why). */
function parsedOnce(parsed: { value: unknown } | undefined) {
  return parsed ? readCallBody(parsed.value) : undefined;
}

export const OPEN_RUN = defineOperation({
  method: "post",
  path: "/v1/runs",
  tag: "runs",
  summary: "Open a run",
  description:
    "Opens a run in one namespace of the tenant. Returns run_id, run_token (short-lived, scoped to this run and namespace), expires_at, environment, limits and the run's tools in the jsonschema format: the namespace's, or with `tools` only that subset plus find_tools and use_tool. With an agent key the run gets the key's agent profile: its namespace, and its limits (a request may ask for less, never more). With a task_key, opening is idempotent: the same key and body answer the same run.",
  credentials: ["tenantKey", "agentKey"],
  parameters: [
    {
      name: "X-User-Assertion",
      in: "header",
      required: false,
      schema: { type: "string" },
      description:
        "Whom the run acts for: a JWT of the tenant's identity provider (its issuer, audience and keys as the tenant's `users` configures), verified before anything opens. The run records its subject, issuer and name; policies, per-user caps, approvals and upstream credentials use it. Required when the tenant's `users.required` is set. Send it from the orchestrator; never let the model set it.",
    },
  ],
  body: {
    component: "OpenRunBody",
    description: "Namespace and optional limits within the tenant's ceilings.",
    schema: openRunBodySchema,
  },
  responses: {
    "200": envelope(
      "The run this task_key opened before, answered again with a valid run token (`reused: true`).",
      "RunOpened",
    ),
    "201": envelope("The run is open.", "RunOpened"),
    "401": envelope(
      "The key is not valid, or the user assertion is missing where the tenant requires one, forged, expired or of another issuer or audience (`permission_error`); nothing is opened.",
    ),
    "404": envelope("The namespace is not available to this tenant (`not_found`)."),
    "409": envelope(
      "This task_key opened a run with another body (`conflict_error`, naming the differing fields); nothing is opened.",
    ),
    "422": envelope("Invalid body or a limit above the tenant's ceiling (`validation_error`)."),
  },
});

runs.on(
  OPEN_RUN.method,
  routeOf(OPEN_RUN, MOUNT),
  requireRunOpener,
  bodyLimit({ maxSize: MAX_CALL_BODY_BYTES, onError: tooLarge(MAX_CALL_BODY_BYTES) }),
  limitJsonBody("object"),
  jsonBody,
  validated("json", OPEN_RUN.body.schema),
  async (c) => {
    const opener = c.get("opener");
    const tenant = opener.kind === "tenant" ? opener.tenant : opener.agent.tenant;
    const header = c.req.header(USER_ASSERTION_HEADER);
    const user = await verifyUserAssertion(c.env, tenant, header, new URL(c.req.url).host);
    if (!user.ok) return respond(c, user.envelope, { authFailure: true });
    const opened = await openRunFor(c.env, opener, c.req.valid("json"), undefined, user.user);
    // A task's run answered again is not created: 200, as for any repeat of a completed request.
    if (opened.ok) return respond(c, opened.envelope, { status: opened.reused ? 200 : 201 });
    return respond(c, opened.envelope);
  },
);

export const RUN_STATUS = defineOperation({
  method: "get",
  path: "/v1/runs/{run_id}",
  tag: "runs",
  summary: "Run status",
  description: "State (open, closed, expired), counters, limits and budget left.",
  credentials: ["runToken"],
  parameters: [RUN_ID],
  responses: { "200": envelope("The run's status.", "RunStatus"), ...FAILURES },
});

runs.on(RUN_STATUS.method, routeOf(RUN_STATUS, MOUNT), requireRunToken, async (c) => {
  const tenant = c.get("tenant");
  const status = await askRun(c.env, c.get("claims"), (ledger) => ledger.status(tenant), found);
  const ctx = requestContext(c.env);
  if (!status)
    return respond(c, failure(ctx, { code: "not_found", message: "This run's data has expired." }));
  return respond(c, success(ctx, status));
});

export const CALL = defineOperation({
  method: "post",
  path: "/v1/runs/{run_id}/calls",
  tag: "runs",
  summary: "Call a tool",
  description:
    "Runs the whole pipeline: validate, policy, ledger (budgets, repeats, idempotency key), dispatch, classify, shape, record. The HTTP status mirrors the envelope's outcome; a replay carries `Idempotent-Replayed: true`.",
  credentials: ["runToken"],
  parameters: [
    RUN_ID,
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
  // Read by the door (src/door/call-body.ts), which charges and traces a malformed call.
  body: { component: "CallBody", description: "The tool and its arguments.", schema: () => CallBodySchema },
  responses: {
    "200": toolCallSuccess(
      "The tool succeeded (or a stored success was replayed). `tool` names the tool and `data` is its shaped output (masked, fenced, whitelisted): one schema per tool of the catalog, or a `LargeResult` (a summary and a handle to page through) when the output is too large to return inline. A run sees only its namespace's tools; `GET /v1/tools?format=mcp` lists them, each with its `outputSchema`: this envelope with `data` narrowed to the tool's output.",
    ),
    "409": envelope("Repeat detected, run closed, conflict, or approval required."),
    "422": envelope("The call or its arguments are invalid; see error.problems."),
    "4XX": envelope("Another failure of the call; see error.code."),
    "5XX": envelope("An upstream or proxy failure; see error.retryable and error.side_effect_confirmed."),
    "401": FAILURES["401"],
  },
});

runs.on(
  CALL.method,
  routeOf(CALL, MOUNT),
  requireRunToken,
  bodyLimit({ maxSize: MAX_CALL_BODY_BYTES, onError: tooLarge(MAX_CALL_BODY_BYTES) }),
  limitJsonBody("call"),
  async (c) => {
    const envelope = await handleToolCall(
      c.env,
      callerOf(c.get("claims")),
      parsedOnce(c.get("json_body")) ?? parseCallBody(await c.req.text()),
      (name) => c.req.header(name),
    );
    return respond(c, envelope);
  },
);

export const TRACE = defineOperation({
  method: "get",
  path: "/v1/runs/{run_id}/trace",
  tag: "runs",
  summary: "Run trace",
  description:
    "The run's dispatches in order, a page at a time (`cursor`, `limit`; each page costs the same however long the run). `Accept: application/x-ndjson` streams the whole trace, one entry per line; `?format=otlp` streams it as OTLP/JSON spans.",
  credentials: ["runToken"],
  parameters: [RUN_ID],
  query: traceQuerySchema,
  responses: { "200": envelope("The run and its trace entries.", "RunTrace"), ...FAILURES },
});

runs.on(TRACE.method, routeOf(TRACE, MOUNT), requireRunToken, validated("query", TRACE.query), async (c) => {
  const runId = c.req.param("run_id");
  const tenant = c.get("tenant");
  const query = c.req.valid("query");
  const ledger = ledgerFor(c.env, tenant, runId);
  const ctx = requestContext(c.env);
  const page = await askRun(
    c.env,
    c.get("claims"),
    (asked) => asked.readTracePage(tenant, Number(query.cursor), query.limit),
    found,
  );
  if (!page) return respond(c, failure(ctx, { code: "not_found", message: "This run's data has expired." }));
  // Exports stream the whole trace from the ledger a page at a time; the Worker never holds it all.
  if (query.format === "otlp") {
    c.header("content-type", "application/json");
    return c.body(otlpExport(ledger, tenant, runId, page.run.environment));
  }
  if ((c.req.header("accept") ?? "").includes("application/x-ndjson")) {
    c.header("content-type", "application/x-ndjson");
    return c.body(ndjsonExport(ledger, tenant));
  }
  return respond(c, success(ctx, page));
});

export const RESULT_PAGE = defineOperation({
  method: "get",
  path: "/v1/runs/{run_id}/results/{handle}",
  tag: "runs",
  summary: "Page of a large result",
  description:
    "One page of a result too large for the envelope; the envelope names its handle. Start at `cursor=0`, then follow each page's next_cursor.",
  credentials: ["runToken"],
  parameters: [
    RUN_ID,
    {
      name: "handle",
      in: "path",
      required: true,
      schema: { type: "string" },
      description: "The result handle from the call's envelope.",
    },
  ],
  query: resultPageQuerySchema,
  responses: {
    "200": envelope("One page.", "ResultPage"),
    "422": envelope("The cursor is not a page number."),
    ...FAILURES,
  },
});

runs.on(
  RESULT_PAGE.method,
  routeOf(RESULT_PAGE, MOUNT),
  requireRunToken,
  validated("query", RESULT_PAGE.query),
  async (c) => {
    const ctx = requestContext(c.env);
    const page = await ledgerFor(c.env, c.get("tenant"), c.req.param("run_id")).resultPage(
      c.get("tenant"),
      c.req.param("handle"),
      Number(c.req.valid("query").cursor),
    );
    if (!page) {
      return respond(
        c,
        failure(ctx, { code: "not_found", message: "No such result page in this run (or it has expired)." }),
      );
    }
    return respond(c, success(ctx, page));
  },
);

/**
 * `POST /v1/runs/{run_id}/tools`: a REST caller adds granted tools to its run explicitly (what
 * `find_tools` found, say); from then on they are listed by `GET /v1/tools` and callable directly.
 * A tool outside the tenant's grants is refused and nothing is added.
 */
export const ADD_RUN_TOOLS = defineOperation({
  method: "post",
  path: "/v1/runs/{run_id}/tools",
  tag: "runs",
  summary: "Add granted tools to a run",
  description:
    "Adds tools the tenant grants (as find_tools names them) to the run: from then on GET /v1/tools lists them and the run calls them directly. An MCP listing keeps the tools the run opened with. A tool outside the grants is refused and nothing is added.",
  credentials: ["runToken"],
  parameters: [RUN_ID],
  body: { component: "AddRunToolsBody", description: "The tools to add.", schema: addRunToolsBodySchema },
  responses: {
    "200": envelope("The run's tools now, in the jsonschema format.", "NamespaceSpecs"),
    "401": FAILURES["401"],
    "404": envelope("The run's data has expired (`not_found`)."),
    "409": envelope("The run has ended (`run_closed`)."),
    "422": envelope("A tool that is unknown or not granted to the tenant (`validation_error`, located)."),
  },
});

runs.on(
  ADD_RUN_TOOLS.method,
  routeOf(ADD_RUN_TOOLS, MOUNT),
  requireRunToken,
  bodyLimit({ maxSize: MAX_CALL_BODY_BYTES, onError: tooLarge(MAX_CALL_BODY_BYTES) }),
  limitJsonBody("object"),
  jsonBody,
  validated("json", ADD_RUN_TOOLS.body.schema),
  async (c) => {
    const tenant = c.get("tenant");
    const ctx = requestContext(c.env);
    const tools = c.req.valid("json").tools;
    const added = await askRun(
      c.env,
      c.get("claims"),
      (ledger) => ledger.addTools(tenant, tools),
      (answer) => answer.kind !== "not_found",
    );
    switch (added.kind) {
      case "not_found":
        return respond(c, failure(ctx, { code: "not_found", message: "This run's data has expired." }));
      case "closed":
        return respond(
          c,
          failure(ctx, { code: "run_closed", message: "This run has ended; open a new run with the tools." }),
        );
      case "refused":
        return respond(
          c,
          failure(ctx, {
            code: "validation_error",
            message: `Not every tool asked for is granted to this run: ${added.problems.map((problem) => `${problem.field} (${problem.reason})`).join("; ")}. Nothing was added.`,
            problems: added.problems,
          }),
        );
      case "added":
        return respond(c, success(ctx, runSpecs(added.tool_set, "jsonschema")));
    }
  },
);

export const END_RUN = defineOperation({
  method: "post",
  path: "/v1/runs/{run_id}/end",
  tag: "runs",
  summary: "End a run",
  description: "Closes the run: later calls answer `run_closed`. Data is kept 24 hours.",
  credentials: ["runToken"],
  parameters: [RUN_ID],
  responses: { "200": envelope("The run's final status.", "RunStatus"), ...FAILURES },
});

runs.on(END_RUN.method, routeOf(END_RUN, MOUNT), requireRunToken, async (c) => {
  const tenant = c.get("tenant");
  const status = await askRun(c.env, c.get("claims"), (ledger) => ledger.end(tenant), found);
  const ctx = requestContext(c.env);
  if (!status)
    return respond(c, failure(ctx, { code: "not_found", message: "This run's data has expired." }));
  return respond(c, success(ctx, status));
});
