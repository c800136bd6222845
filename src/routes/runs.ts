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
import { runSpecs } from "../specs/tool-specs";
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

/** Whether the run's ledger found the run: an answer of a ledger without one is null. */
const found = (answer: unknown) => answer !== null;

/** The call body `limitJsonBody` already parsed; undefined when it was not JSON (then parsed here, to say why). */
function parsedOnce(parsed: { value: unknown } | undefined) {
  return parsed ? readCallBody(parsed.value) : undefined;
}

runs.post(
  "/",
  requireRunOpener,
  bodyLimit({ maxSize: MAX_CALL_BODY_BYTES, onError: tooLarge(MAX_CALL_BODY_BYTES) }),
  limitJsonBody("object"),
  jsonBody,
  validated("json", openRunBodySchema),
  async (c) => {
    const opened = await openRunFor(c.env, c.get("opener"), c.req.valid("json"));
    // A task's run answered again is not created: 200, as for any repeat of a completed request.
    if (opened.ok) return respond(c, opened.envelope, { status: opened.reused ? 200 : 201 });
    return respond(c, opened.envelope);
  },
);

runs.get("/:run_id", requireRunToken, async (c) => {
  const tenant = c.get("tenant");
  const status = await askRun(c.env, c.get("claims"), (ledger) => ledger.status(tenant), found);
  const ctx = requestContext(c.env);
  if (!status)
    return respond(c, failure(ctx, { code: "not_found", message: "This run's data has expired." }));
  return respond(c, success(ctx, status));
});

runs.post(
  "/:run_id/calls",
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

runs.get("/:run_id/trace", requireRunToken, validated("query", traceQuerySchema), async (c) => {
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

runs.get(
  "/:run_id/results/:handle",
  requireRunToken,
  validated("query", resultPageQuerySchema),
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
runs.post(
  "/:run_id/tools",
  requireRunToken,
  bodyLimit({ maxSize: MAX_CALL_BODY_BYTES, onError: tooLarge(MAX_CALL_BODY_BYTES) }),
  limitJsonBody("object"),
  jsonBody,
  validated("json", addRunToolsBodySchema),
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

runs.post("/:run_id/end", requireRunToken, async (c) => {
  const tenant = c.get("tenant");
  const status = await askRun(c.env, c.get("claims"), (ledger) => ledger.end(tenant), found);
  const ctx = requestContext(c.env);
  if (!status)
    return respond(c, failure(ctx, { code: "not_found", message: "This run's data has expired." }));
  return respond(c, success(ctx, status));
});
