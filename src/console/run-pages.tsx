/** @jsxImportSource hono/jsx */
import type { Context } from "hono";
import { MAX_LIST_LIMIT } from "../approvals/list-limits";
import { environmentOf } from "../config/environment";
import { inspectRun, listApprovals } from "../ledger/operator-client";
import type { ConsoleEnv } from "./console-env";
import { messagePage } from "./guards";
import { toolValuesOf } from "./tool-values";
import { RunPage } from "./views/run-page";

/** Run ids are `run_` and hex; anything else is not looked up, so junk never creates a ledger. */
const RUN_ID = /^run_[A-Za-z0-9]{1,64}$/;

/** Calls per page of a run: a long run is read a page at a time, like the trace API. */
export const RUN_PAGE_CALLS = 100;

/** Where the page of calls starts: a cursor the previous page gave, or the run's first call. */
function cursorOf(raw: string | undefined): number {
  return raw && /^\d{1,15}$/.test(raw) ? Number(raw) : 0;
}

/** A run's calls and approvals; the ledger is found by tenant and run id together, so another tenant's run is not found. */
export async function showRun(c: Context<ConsoleEnv>) {
  const session = c.get("session");
  const runId = c.req.param("run_id") ?? "";
  const [found, approvals] = RUN_ID.test(runId)
    ? await Promise.all([
        inspectRun(c.env, session.tenant, runId, {
          cursor: cursorOf(c.req.query("cursor")),
          limit: RUN_PAGE_CALLS,
        }),
        listApprovals(c.env, session.tenant, { state: "all", run_id: runId, limit: MAX_LIST_LIMIT }),
      ])
    : [null, null];
  if (!found) {
    return messagePage(
      c,
      404,
      "Run not found",
      "There is no such run for your tenant. It may belong to another tenant, or its data has expired.",
    );
  }
  return c.html(
    <RunPage
      environment={environmentOf(c.env)}
      session={session}
      run={found.run}
      entries={found.entries}
      nextCursor={found.next_cursor}
      approvals={approvals?.approvals ?? []}
      now={Date.now()}
      money={toolValuesOf([found.run.namespace])}
    />,
  );
}
