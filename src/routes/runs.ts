import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import * as z from "zod";
import { issueRunToken } from "../auth/run-token";
import { loadConfig } from "../config/load";
import { RunLimitsSchema, resolveRunLimits } from "../config/tenants";
import { failure, success } from "../envelope";
import type { AppEnv } from "../http/app-env";
import { parseCallBody } from "../http/call-body";
import { parseJsonBody } from "../http/json-body";
import { limitJsonBody } from "../http/limits";
import { tooLarge } from "../http/too-large";
import { RETENTION_MS } from "../ledger/run-ledger";
import { requireRunToken, requireTenantKey } from "../pipeline/authenticate";
import { handleToolCall } from "../pipeline/entry";
import { requestContext, respond } from "../pipeline/respond";
import { limitRunOpens } from "../ratelimit/middleware";
import { acceptScenario } from "../scenarios/accept";
import { ScenarioSchema } from "../scenarios/scenario";
import { catalog } from "../tools";
import type { RunOpened } from "../wire/run-open";
import { ledgerFor } from "./ledger-stub";
import { toolSpecsFor } from "./tool-specs";
import { traceToOtlp } from "./trace-otlp";

export const MAX_CALL_BODY_BYTES = 64 * 1024;
/** Run tokens outlive the deadline a little, so an agent can still read its status and trace. */
const TOKEN_GRACE_MS = 60 * 60 * 1000;

export const OpenRunBodySchema = z.strictObject({
  namespace: z.string().describe("The tool namespace the run may use, such as support."),
  limits: RunLimitsSchema.partial()
    .optional()
    .describe("Budgets for this run, within the tenant's ceilings."),
  scenario: ScenarioSchema.optional(),
});

export const runs = new Hono<AppEnv>();

runs.post(
  "/",
  requireTenantKey,
  limitRunOpens,
  bodyLimit({ maxSize: MAX_CALL_BODY_BYTES, onError: tooLarge(MAX_CALL_BODY_BYTES) }),
  limitJsonBody("object"),
  async (c) => {
    const tenantId = c.get("tenant");
    const config = loadConfig(c.env);
    const tenant = config.tenants[tenantId];
    const ctx = requestContext(c.env);
    const parsed = parseJsonBody(await c.req.text(), OpenRunBodySchema);
    if (!parsed.ok) {
      return respond(
        c,
        failure(ctx, {
          code: "validation_error",
          message: "The request body is invalid. Fix the fields listed in problems.",
          problems: parsed.problems,
        }),
      );
    }
    const body = parsed.value;
    if (!tenant?.namespaces.includes(body.namespace) || !catalog.hasNamespace(body.namespace)) {
      return respond(
        c,
        failure(ctx, {
          code: "not_found",
          message: `Namespace "${body.namespace}" is not available to this tenant.`,
          details: { namespaces: tenant?.namespaces.filter((ns) => catalog.hasNamespace(ns)) ?? [] },
        }),
      );
    }
    const limits = resolveRunLimits(body.limits, tenant.ceilings);
    if (!limits.ok) {
      return respond(
        c,
        failure(ctx, {
          code: "validation_error",
          message: `limits.${limits.field} asks for ${limits.asked}, above this tenant's ceiling.`,
          problems: [
            {
              field: `limits.${limits.field}`,
              reason: `${limits.asked} is above the tenant's ceiling`,
              hint: `At most ${limits.ceiling}.`,
            },
          ],
        }),
      );
    }
    const scenario = acceptScenario(
      body.scenario,
      config.faultInjection,
      new Map(catalog.tools(body.namespace).map((tool) => [tool.name, tool.side_effect])),
    );
    if (!scenario.ok) {
      return respond(
        c,
        failure(ctx, { code: "validation_error", message: scenario.message, problems: scenario.problems }),
      );
    }
    const runId = `run_${crypto.randomUUID().replaceAll("-", "")}`;
    const status = await ledgerFor(c.env, tenantId, runId).open({
      tenant: tenantId,
      run_id: runId,
      namespace: body.namespace,
      limits: limits.limits,
      repeat_threshold: tenant.repeat_threshold,
      scenario: scenario.value,
    });
    const expiresAt = Date.parse(status.deadline_at) + TOKEN_GRACE_MS;
    const token = await issueRunToken(
      { tenant: tenantId, run: runId, ns: body.namespace, exp: expiresAt },
      config.runTokenKeys,
    );
    const { run_id, ...rest } = status;
    const opened: RunOpened = {
      run_id,
      run_token: token,
      expires_at: new Date(expiresAt).toISOString(),
      retained_until: new Date(Date.parse(status.deadline_at) + RETENTION_MS).toISOString(),
      ...rest,
      ...(body.scenario === undefined ? {} : { scenario: scenario.value }),
      tools: await toolSpecsFor(body.namespace),
    };
    return respond(c, success(ctx, opened), { status: 201 });
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
      { tenant: c.get("tenant"), run: c.get("claims").run },
      parseCallBody(await c.req.text()),
      (name) => c.req.header(name),
    );
    return respond(c, envelope);
  },
);

runs.get("/:run_id/trace", requireRunToken, async (c) => {
  const runId = c.req.param("run_id");
  const trace = await ledgerFor(c.env, c.get("tenant"), runId).readTrace(c.get("tenant"));
  const ctx = requestContext(c.env);
  if (!trace) return respond(c, failure(ctx, { code: "not_found", message: "This run's data has expired." }));
  if (c.req.query("format") === "otlp")
    return c.json(traceToOtlp(runId, trace.entries, trace.run.environment));
  if ((c.req.header("accept") ?? "").includes("application/x-ndjson")) {
    c.header("content-type", "application/x-ndjson");
    return c.body(trace.entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
  }
  return respond(c, success(ctx, { run: trace.run, entries: trace.entries }));
});

runs.get("/:run_id/results/:handle", requireRunToken, async (c) => {
  const ctx = requestContext(c.env);
  const cursorText = c.req.query("cursor") ?? "0";
  if (!/^\d{1,6}$/.test(cursorText)) {
    return respond(
      c,
      failure(ctx, {
        code: "validation_error",
        message: "cursor must be a page number.",
        problems: [
          {
            field: "cursor",
            reason: "not a non-negative integer",
            hint: "Use 0, then each page's next_cursor.",
          },
        ],
      }),
    );
  }
  const page = await ledgerFor(c.env, c.get("tenant"), c.req.param("run_id")).resultPage(
    c.get("tenant"),
    c.req.param("handle"),
    Number(cursorText),
  );
  if (!page) {
    return respond(
      c,
      failure(ctx, { code: "not_found", message: "No such result page in this run (or it has expired)." }),
    );
  }
  return respond(c, success(ctx, page));
});

runs.post("/:run_id/end", requireRunToken, async (c) => {
  const status = await ledgerFor(c.env, c.get("tenant"), c.req.param("run_id")).end(c.get("tenant"));
  const ctx = requestContext(c.env);
  if (!status)
    return respond(c, failure(ctx, { code: "not_found", message: "This run's data has expired." }));
  return respond(c, success(ctx, status));
});
