import { Hono } from "hono";
import { loadConfig } from "../config/load";
import type { AppEnv } from "../http/app-env";
import { requireOperatorKey } from "../http/authenticate";
import { requestContext, respond } from "../http/respond";
import { valueUsageToday } from "../ledger/effects-client";
import type { ValueUsageReport } from "../wire/effects";
import { success } from "../wire/envelope";

/** `GET /v1/value-usage`: what the tenant's runs moved today in each capped currency (operators). */
export const valueUsage = new Hono<AppEnv>();

valueUsage.get("/", requireOperatorKey, async (c) => {
  const tenant = c.get("tenant");
  const config = loadConfig(c.env).tenants[tenant];
  const report: ValueUsageReport = { usage: config ? await valueUsageToday(c.env, tenant, config) : [] };
  return respond(c, success(requestContext(c.env), report));
});
