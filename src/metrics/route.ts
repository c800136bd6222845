import { Hono } from "hono";
import { loadConfig } from "../config/load";
import type { AppEnv } from "../http/app-env";
import { requireOperatorKey } from "../http/authenticate";
import { requestContext, respond } from "../http/respond";
import { validated } from "../http/validation-hook";
import { failure, success } from "../wire/envelope";
import { MetricsQuerySchema, rangeOf } from "../wire/metrics";
import { readMetrics } from "./read";

/** `GET /v1/metrics`: the health of the operator's tenant's agents, per namespace, over time. */
export const metrics = new Hono<AppEnv>();

metrics.get("/", requireOperatorKey, validated("query", MetricsQuerySchema), async (c) => {
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
});
