/** @jsxImportSource hono/jsx */
import type { Context } from "hono";
import { RunFiltersSchema } from "../approvals/list-filters";
import { environmentOf } from "../config/environment";
import { listRuns } from "../ledger/operator-client";
import { RUN_LIST_STATES } from "../wire/run-summary";
import type { ConsoleEnv } from "./console-env";
import { filterValues, hrefWith, parseFilters } from "./list-query";
import { tenantToolNames } from "./tenant-tools";
import { Notice } from "./views/layout";
import { RunsList } from "./views/runs-list";
import { RunsPage } from "./views/runs-page";

const PATH = "/console/runs";
const FRAGMENT_PATH = "/console/fragments/runs";
const STATES = ["all", ...RUN_LIST_STATES.filter((state) => state !== "all")] as const;

/** The runs a list page's query asks for, with the links that page and its fragment show. */
async function runsFor(c: Context<ConsoleEnv>) {
  const values = filterValues(c.req.url);
  const parsed = parseFilters(RunFiltersSchema, values);
  if (!parsed.ok) return { ok: false as const, values, problems: parsed.problems };
  const page = await listRuns(c.env, c.get("session").tenant, parsed.filters);
  return {
    ok: true as const,
    values,
    list: {
      runs: page.runs,
      now: Date.now(),
      newest: values.cursor ? hrefWith(PATH, values, { cursor: undefined }) : null,
      older: page.next_cursor ? hrefWith(PATH, values, { cursor: page.next_cursor }) : null,
    },
  };
}

/** `/console/runs`: the tenant's runs, searchable by id, live unless paused (`?refresh=off`). */
export async function showRuns(c: Context<ConsoleEnv>) {
  const session = c.get("session");
  const found = await runsFor(c);
  const live = found.ok && c.req.query("refresh") !== "off";
  return c.html(
    <RunsPage
      environment={environmentOf(c.env)}
      session={session}
      values={found.values}
      states={STATES}
      tools={tenantToolNames(c.env, session.tenant)}
      problems={found.ok ? [] : found.problems}
      fragment={live ? hrefWith(FRAGMENT_PATH, found.values) : null}
      {...(found.ok ? found.list : { runs: [], now: Date.now(), newest: null, older: null })}
    />,
    found.ok ? 200 : 422,
  );
}

/** `/console/fragments/runs`: the runs list alone, for the runs page's live region. */
export async function runsFragment(c: Context<ConsoleEnv>) {
  const found = await runsFor(c);
  if (!found.ok) {
    return c.html(
      <Notice kind="error">
        <p>These filters are not valid; reload the page.</p>
      </Notice>,
      422,
    );
  }
  return c.html(<RunsList live {...found.list} />);
}
