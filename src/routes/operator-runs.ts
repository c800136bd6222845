import { Hono } from "hono";
import { RunFiltersSchema } from "../approvals/list-filters";
import type { AppEnv } from "../http/app-env";
import { requireOperatorKey } from "../http/authenticate";
import { requestContext, respond } from "../http/respond";
import { validated } from "../http/validation-hook";
import { listRuns } from "../ledger/operator-client";
import { success } from "../wire/envelope";
import type { RunList } from "../wire/run-summary";

/** The operator's list of the tenant's runs, mounted at `GET /v1/runs` beside the agents' run routes. */
export const operatorRuns = new Hono<AppEnv>();

/** `GET /v1/runs?state=&tool=&subject=&since=&until=&cursor=&limit=`: an operator's search of the tenant's runs. */
operatorRuns.get("/", requireOperatorKey, validated("query", RunFiltersSchema), async (c) => {
  const filters = c.req.valid("query");
  const page = await listRuns(c.env, c.get("tenant"), filters);
  const list: RunList = { state: filters.state, ...page };
  return respond(c, success(requestContext(c.env), list));
});
