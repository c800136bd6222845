/** @jsxImportSource hono/jsx */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { decideApproval, inspectApproval, listApprovals } from "../approvals/operator";
import type { ConsoleEnv } from "./console-env";
import { parseDecisionForm } from "./decision-form";
import { draftPreview } from "./draft-preview";
import { environmentOf } from "./guards";
import { ApprovalPage } from "./views/approval-page";
import { ApprovalsPage } from "./views/approvals-page";
import { MessagePage } from "./views/message-page";

/** Often enough that a new request shows up while the operator is looking; rare enough to read a row. */
export const REFRESH_SECONDS = 15;

/** Approval ids are `apr_` and hex; anything else is not looked up, so junk never wakes a Durable Object. */
const APPROVAL_ID = /^apr_[A-Za-z0-9]{1,64}$/;

export async function showPending(c: Context<ConsoleEnv>) {
  const session = c.get("session");
  const approvals = await listApprovals(c.env, session.tenant, "pending");
  return c.html(
    <ApprovalsPage
      environment={environmentOf(c)}
      session={session}
      approvals={approvals}
      now={Date.now()}
      refreshSeconds={c.req.query("refresh") === "off" ? null : REFRESH_SECONDS}
    />,
  );
}

export function approvalNotFound(c: Context<ConsoleEnv>) {
  return c.html(
    <MessagePage
      environment={environmentOf(c)}
      session={c.get("session")}
      title="Approval not found"
      message="There is no such approval for your tenant. It may belong to another tenant, or the link is wrong."
    />,
    404,
  );
}

/** Another tenant's approval is "not found", exactly like one that never existed. */
async function renderApproval(
  c: Context<ConsoleEnv>,
  approvalId: string,
  opts: { decided?: boolean; error?: string; status?: ContentfulStatusCode } = {},
) {
  const session = c.get("session");
  const found = APPROVAL_ID.test(approvalId)
    ? await inspectApproval(c.env, session.tenant, approvalId)
    : null;
  if (!found) return approvalNotFound(c);
  // Only while it can still be decided: the operator must see the text the send would carry.
  const draft = found.approval.state === "pending" ? await draftPreview(c.env, found.approval) : null;
  return c.html(
    <ApprovalPage
      environment={environmentOf(c)}
      session={session}
      approval={found.approval}
      run={found.run}
      traceLength={found.trace.length}
      now={Date.now()}
      decided={opts.decided ?? false}
      error={opts.error}
      draft={draft}
    />,
    opts.status ?? 200,
  );
}

export function showApproval(c: Context<ConsoleEnv>) {
  return renderApproval(c, c.req.param("id") ?? "", { decided: c.req.query("decided") !== undefined });
}

/**
 * Approve or reject through the same operator service as the JSON API, so an approval executes
 * exactly once through the run's ledger whichever door it came through. Success redirects (PRG):
 * reloading the outcome page never posts the decision again.
 */
export function decide(decision: "approve" | "reject") {
  return async (c: Context<ConsoleEnv>) => {
    const approvalId = c.req.param("id") ?? "";
    const form = parseDecisionForm(decision, (await c.req.parseBody()).reason);
    if (!form.ok) return renderApproval(c, approvalId, { error: form.message, status: 422 });
    if (!APPROVAL_ID.test(approvalId)) return approvalNotFound(c);
    const session = c.get("session");
    const result = await decideApproval(c.env, {
      tenant: session.tenant,
      operator: session.operator,
      approvalId,
      decision,
      reason: form.reason,
    });
    if (!result.ok) {
      if (result.code === "not_found") return approvalNotFound(c);
      return renderApproval(c, approvalId, { error: result.message, status: 409 });
    }
    return c.redirect(`/console/approvals/${encodeURIComponent(approvalId)}?decided=${decision}`, 303);
  };
}
