/** @jsxImportSource hono/jsx */
import type { Context } from "hono";
import { ApprovalFiltersSchema } from "../approvals/list-filters";
import { environmentOf } from "../config/environment";
import { listApprovals } from "../ledger/operator-client";
import { APPROVAL_LIST_STATES } from "../wire/approval-answers";
import type { ConsoleEnv } from "./console-env";
import { filterValues, hrefWith, parseFilters } from "./list-query";
import { tenantToolNames } from "./tenant-tools";
import { tenantToolValues } from "./tool-values";
import { HistoryPage } from "./views/history-page";

const PATH = "/console/approvals";
/** History shows every state unless asked; the API's default (pending) is the other page's job. */
const STATES = ["all", ...APPROVAL_LIST_STATES.filter((state) => state !== "all")] as const;

/** `/console/approvals`: every approval of the tenant, filtered by the form and paged by cursor. */
export async function showHistory(c: Context<ConsoleEnv>) {
  const session = c.get("session");
  const values = filterValues(c.req.url);
  const parsed = parseFilters(ApprovalFiltersSchema, { state: "all", ...values });
  const page = parsed.ok ? await listApprovals(c.env, session.tenant, parsed.filters) : null;
  return c.html(
    <HistoryPage
      environment={environmentOf(c.env)}
      session={session}
      values={values}
      states={STATES}
      tools={tenantToolNames(c.env, session.tenant)}
      problems={parsed.ok ? [] : parsed.problems}
      approvals={page?.approvals ?? []}
      now={Date.now()}
      money={tenantToolValues(c.env, session.tenant)}
      newest={values.cursor ? hrefWith(PATH, values, { cursor: undefined }) : null}
      older={page?.next_cursor ? hrefWith(PATH, values, { cursor: page.next_cursor }) : null}
    />,
    parsed.ok ? 200 : 422,
  );
}
