/** @jsxImportSource hono/jsx */
import type { Context } from "hono";
import { environmentOf } from "../config/environment";
import { listApprovals } from "../ledger/operator-client";
import type { ConsoleEnv } from "./console-env";
import { tenantToolValues } from "./tool-values";
import { ApprovalsPage } from "./views/approvals-page";
import { PendingList } from "./views/pending-list";

/** The pending list shows this many, the most one page of the directory gives. */
const PENDING_SHOWN = 100;

async function pending(c: Context<ConsoleEnv>) {
  const page = await listApprovals(c.env, c.get("session").tenant, {
    state: "pending",
    limit: PENDING_SHOWN,
  });
  return {
    approvals: page.approvals,
    more: page.next_cursor !== null,
    now: Date.now(),
    money: tenantToolValues(c.env, c.get("session").tenant),
  };
}

/** `/console`: "Waiting for you", live unless the operator paused updates (`?refresh=off`). */
export async function showPending(c: Context<ConsoleEnv>) {
  return c.html(
    <ApprovalsPage
      environment={environmentOf(c.env)}
      session={c.get("session")}
      live={c.req.query("refresh") !== "off"}
      {...(await pending(c))}
    />,
  );
}

/** `/console/fragments/pending`: the pending list alone, for the page's live region. */
export async function pendingFragment(c: Context<ConsoleEnv>) {
  return c.html(<PendingList live {...(await pending(c))} />);
}
