import { Hono } from "hono";
import { RunFiltersSchema } from "../approvals/list-filters";
import type { AppEnv } from "../http/app-env";
import { requireOperatorKey } from "../http/authenticate";
import { requestContext, respond } from "../http/respond";
import { validated } from "../http/validation-hook";
import { listRuns } from "../ledger/operator-client";
import { defineOperation, envelope, FAILURES, routeOf } from "../specs/operation";
import { success } from "../wire/envelope";
import type { RunList } from "../wire/run-summary";

/** The operator's list of the tenant's runs, mounted at `GET /v1/runs` beside the agents' run routes. */
export const operatorRuns = new Hono<AppEnv>();

/** `GET /v1/runs?state=&tool=&subject=&since=&until=&cursor=&limit=`: an operator's search of the tenant's runs. */
export const LIST_RUNS = defineOperation({
  method: "get",
  path: "/v1/runs",
  tag: "runs",
  summary: "List and search runs (operators)",
  description:
    "One page of the tenant's runs, newest first, for an operator: by state (open, closed, expired: open past its deadline; default all), tool called, subject named (an id from the arguments: `A1002`, or `order_id=A1002`) and opening time. Pass `next_cursor` back as `cursor`, with the same filters, for the next page.",
  credentials: ["operatorKey"],
  query: () => RunFiltersSchema,
  responses: {
    "200": envelope("One page of runs.", "RunList"),
    "401": FAILURES["401"],
    "403": FAILURES["403"],
    "422": envelope(
      "An unknown state or parameter, a bad date or cursor, or a limit out of range (`validation_error`).",
    ),
  },
});

operatorRuns.on(
  LIST_RUNS.method,
  routeOf(LIST_RUNS, "/v1/runs"),
  requireOperatorKey,
  validated("query", LIST_RUNS.query),
  async (c) => {
    const filters = c.req.valid("query");
    const page = await listRuns(c.env, c.get("tenant"), filters);
    const list: RunList = { state: filters.state, ...page };
    return respond(c, success(requestContext(c.env), list));
  },
);
