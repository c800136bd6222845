import { Hono } from "hono";
import { loadConfig } from "../config/load";
import type { AppEnv } from "../http/app-env";
import { requireOperatorKey } from "../http/authenticate";
import { requestContext, respond } from "../http/respond";
import { validated } from "../http/validation-hook";
import { defineOperation, envelope, FAILURES, routeOf } from "../specs/operation";
import { failure, success } from "../wire/envelope";
import { MetricsQuerySchema, rangeOf } from "../wire/metrics";
import { readMetrics } from "./read";

/** `GET /v1/metrics`: the health of the operator's tenant's agents, per namespace, over time. */
export const metrics = new Hono<AppEnv>();

export const METRICS = defineOperation({
  method: "get",
  path: "/v1/metrics",
  tag: "metrics",
  summary: "The health of the tenant's agents",
  description:
    "Per namespace and bucket (minute, hour or day; at most 500 buckets over at most 8 days, the last 24 hours by hour when omitted): calls, success, retryable and terminal failures, invalid calls (validation and policy refusals), loops (repeat breaker), escalations (answered with an approval pending), approvals asked, approved, rejected and expired with their wait, replays and duplicate effects prevented, with the rates derived from them. Every bucket of the range is listed, empty ones with 0. Production reads Workers Analytics Engine, which samples at high volume; the sandbox counts exactly.",
  credentials: ["operatorKey"],
  query: () => MetricsQuerySchema,
  responses: {
    "200": envelope("The tenant's metrics.", "MetricsReport"),
    "401": FAILURES["401"],
    "403": FAILURES["403"],
    "422": envelope(
      "A bad date, a range over 8 days or 500 buckets, an unknown bucket, parameter or namespace (`validation_error`).",
    ),
    "500": envelope("Metrics reading is not configured: METRICS_ACCOUNT_ID or METRICS_API_TOKEN is missing."),
    "503": envelope("The metrics source did not answer; retry shortly (`transient_error`)."),
  },
});

metrics.on(
  METRICS.method,
  routeOf(METRICS, "/v1/metrics"),
  requireOperatorKey,
  validated("query", METRICS.query),
  async (c) => {
    const query = c.req.valid("query");
    const tenant = c.get("tenant");
    const ctx = requestContext(c.env);
    const namespaces = loadConfig(c.env).tenants[tenant]?.namespaces ?? [];
    if (query.namespace !== undefined && !namespaces.includes(query.namespace)) {
      return respond(
        c,
        failure(ctx, {
          code: "validation_error",
          message: "The query is invalid. Fix the parameters listed in problems.",
          problems: [
            {
              field: "query.namespace",
              reason: `"${query.namespace}" is not a namespace of this tenant`,
              hint: `Namespaces: ${namespaces.join(", ")}; omit it for all of them.`,
            },
          ],
        }),
      );
    }
    const { since, until } = rangeOf(query);
    const reading = await readMetrics(c.env, tenant, {
      since,
      until,
      bucket: query.bucket,
      ...(query.namespace !== undefined ? { namespace: query.namespace } : {}),
    });
    if (reading.ok) return respond(c, success(ctx, reading.report));
    return respond(
      c,
      failure(
        ctx,
        reading.reason === "not_configured"
          ? {
              code: "internal_error",
              outcome: "terminal_failure",
              message: reading.message,
              recommended_next_action: "escalate_to_human",
              details: reading.details,
            }
          : { code: "transient_error", message: reading.message },
      ),
    );
  },
);
