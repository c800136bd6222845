import { Hono } from "hono";
import { loadConfig } from "../config/load";
import type { AppEnv } from "../http/app-env";
import { requireOperatorKey } from "../http/authenticate";
import { requestContext, respond } from "../http/respond";
import { valueUsageToday } from "../ledger/effects-client";
import { defineOperation, envelope, FAILURES, routeOf } from "../specs/operation";
import type { ValueUsageReport } from "../wire/effects";
import { success } from "../wire/envelope";

/** `GET /v1/value-usage`: what the tenant's runs moved today in each capped currency (operators). */
export const valueUsage = new Hono<AppEnv>();

export const VALUE_USAGE = defineOperation({
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
});

valueUsage.on(VALUE_USAGE.method, routeOf(VALUE_USAGE, "/v1/value-usage"), requireOperatorKey, async (c) => {
  const tenant = c.get("tenant");
  const config = loadConfig(c.env).tenants[tenant];
  const report: ValueUsageReport = { usage: config ? await valueUsageToday(c.env, tenant, config) : [] };
  return respond(c, success(requestContext(c.env), report));
});
