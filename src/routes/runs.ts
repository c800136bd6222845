import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import * as z from "zod";
import { RunLimitsSchema } from "../config/tenants";
import { failure, success } from "../envelope";
import type { AppEnv } from "../http/app-env";
import { parseCallBody, readCallBody } from "../http/call-body";
import { limitJsonBody } from "../http/limits";
import { tooLarge } from "../http/too-large";
import { jsonBody, validated } from "../http/validation-hook";
import { requireRunOpener, requireRunToken } from "../pipeline/authenticate";
import { handleToolCall } from "../pipeline/entry";
import { requestContext, respond } from "../pipeline/respond";
import { limitRunOpens } from "../ratelimit/middleware";
import { openRunFor } from "../runs/open-run";
import { ScenarioSchema } from "../scenarios/scenario";
import { ledgerFor } from "./ledger-stub";
import { ndjsonExport, otlpExport } from "./trace-export";

export const MAX_CALL_BODY_BYTES = 64 * 1024;

export const OpenRunBodySchema = z.strictObject({
  namespace: z
    .string()
    .optional()
    .describe(
      "The tool namespace the run may use, such as support. Required with a tenant key; an agent key's profile names it.",
    ),
  limits: RunLimitsSchema.partial()
    .optional()
    .describe("Budgets for this run, within the tenant's ceilings."),
  scenario: ScenarioSchema.optional(),
});

/** `GET /v1/runs/{run_id}/results/{handle}?cursor=`: which page of a large result. */
export const ResultPageQuerySchema = z.strictObject({
  cursor: z
    .string()
    .regex(/^\d{1,6}$/, "not a non-negative integer")
    .default("0")
    .describe("The page to read: 0, then each page's next_cursor."),
});

export const runs = new Hono<AppEnv>();

/** The call body `limitJsonBody` already parsed; undefined when it was not JSON (then parsed here, to say why). */
function parsedOnce(parsed: { value: unknown } | undefined) {
  return parsed ? readCallBody(parsed.value) : undefined;
}

runs.post(
  "/",
  requireRunOpener,
  limitRunOpens,
  bodyLimit({ maxSize: MAX_CALL_BODY_BYTES, onError: tooLarge(MAX_CALL_BODY_BYTES) }),
  limitJsonBody("object"),
  jsonBody,
  validated("json", OpenRunBodySchema),
  async (c) => {
    const opened = await openRunFor(c.env, c.get("opener"), c.req.valid("json"));
    return opened.ok ? respond(c, opened.envelope, { status: 201 }) : respond(c, opened.envelope);
  },
);

runs.get("/:run_id", requireRunToken, async (c) => {
  const status = await ledgerFor(c.env, c.get("tenant"), c.req.param("run_id")).status(c.get("tenant"));
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
      { tenant: c.get("tenant"), run: c.get("claims").run, namespace: c.get("claims").ns },
      parsedOnce(c.get("json_body")) ?? parseCallBody(await c.req.text()),
      (name) => c.req.header(name),
    );
    return respond(c, envelope);
  },
);

/** `GET /v1/runs/{run_id}/trace?cursor=&limit=&format=`: a page of the trace, or the whole as an export. */
export const TraceQuerySchema = z.strictObject({
  cursor: z
    .string()
    .regex(/^\d{1,15}$/, "not a cursor this endpoint gave")
    .default("0")
    .describe("Where the page starts: omit for the first, then each page's next_cursor."),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, "not a whole number")
    .default("100")
    .transform(Number)
    .pipe(z.number().int().min(1).max(1000))
    .describe("Entries per page, 1 to 1000; 100 when omitted."),
  format: z
    .enum(["otlp"])
    .optional()
    .describe("otlp: the whole trace as OpenTelemetry JSON spans, streamed; cursor and limit do not apply."),
});

runs.get("/:run_id/trace", requireRunToken, validated("query", TraceQuerySchema), async (c) => {
  const runId = c.req.param("run_id");
  const tenant = c.get("tenant");
  const query = c.req.valid("query");
  const ledger = ledgerFor(c.env, tenant, runId);
  const ctx = requestContext(c.env);
  const page = await ledger.readTracePage(tenant, Number(query.cursor), query.limit);
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
  validated("query", ResultPageQuerySchema),
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

runs.post("/:run_id/end", requireRunToken, async (c) => {
  const status = await ledgerFor(c.env, c.get("tenant"), c.req.param("run_id")).end(c.get("tenant"));
  const ctx = requestContext(c.env);
  if (!status)
    return respond(c, failure(ctx, { code: "not_found", message: "This run's data has expired." }));
  return respond(c, success(ctx, status));
});
