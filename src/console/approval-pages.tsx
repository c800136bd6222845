/** @jsxImportSource hono/jsx */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { environmentOf } from "../config/environment";
import { loadConfig } from "../config/load";
import { canonicalJson } from "../core/canonical-json";
import { sha256Hex } from "../core/digest";
import type { Env } from "../env";
import { valueUsageToday } from "../ledger/effects-client";
import { decideApproval, inspectApproval } from "../ledger/operator-client";
import { catalog } from "../tools";
import type { ValueUsage } from "../wire/effects";
import type { ConsoleEnv } from "./console-env";
import { readDecisionContext } from "./decision-context";
import { parseDecisionForm } from "./decision-form";
import { draftPreview } from "./draft-preview";
import { argsFromForm, type EditState, editFieldsOf } from "./edit-form";
import { messagePage } from "./guards";
import { keyPromiseText } from "./key-promise-text";
import { tenantToolValues, toolValuesOf } from "./tool-values";
import { ApprovalPage } from "./views/approval-page";

/** A decision context's digest as the forms carry it; anything else is not recorded. */
const DIGEST = /^[0-9a-f]{64}$/;

/** Approval ids are `apr_` and hex; anything else is not looked up, so junk never wakes a Durable Object. */
const APPROVAL_ID = /^apr_[A-Za-z0-9]{1,64}$/;

export function approvalNotFound(c: Context<ConsoleEnv>) {
  return messagePage(
    c,
    404,
    "Approval not found",
    "There is no such approval for your tenant. It may belong to another tenant, or the link is wrong.",
  );
}

/** Another tenant's approval is "not found", exactly like one that never existed. */
async function renderApproval(
  c: Context<ConsoleEnv>,
  approvalId: string,
  opts: { decided?: boolean; error?: string; status?: ContentfulStatusCode; edit?: EditState } = {},
) {
  const session = c.get("session");
  const found = APPROVAL_ID.test(approvalId)
    ? await inspectApproval(c.env, session.tenant, approvalId)
    : null;
  if (!found) return approvalNotFound(c);
  // Only while it can still be decided: the operator must see the text the send would carry and
  // the state of what the call acts on, read now, not when the agent asked.
  const pending = found.approval.state === "pending";
  const [draft, context, valueUsage] = pending
    ? await Promise.all([
        found.tool_namespace ? draftPreview(c.env, found.approval, found.tool_namespace) : null,
        found.tool_namespace ? readDecisionContext(c.env, found.approval, found.tool_namespace) : null,
        capsUsedToday(c.env, session.tenant),
      ])
    : [null, null, undefined];
  const tool = found.tool_namespace ? catalog.find(found.tool_namespace, found.approval.tool) : undefined;
  // What the decision forms say the operator saw: the digest of the facts this page shows, which
  // the decision's audit receipt records.
  const seen = context && context.facts.length > 0 ? await sha256Hex(canonicalJson(context.facts)) : null;
  return c.html(
    <ApprovalPage
      environment={environmentOf(c.env)}
      session={session}
      approval={found.approval}
      run={found.run}
      traceLength={found.trace.length}
      now={Date.now()}
      money={
        found.tool_namespace ? toolValuesOf([found.tool_namespace]) : tenantToolValues(c.env, session.tenant)
      }
      decided={opts.decided ?? false}
      error={opts.error}
      draft={draft}
      context={context}
      seen={seen}
      duplicates={found.duplicates}
      valueUsage={valueUsage}
      dryRun={tool?.dry_run ?? null}
      upstreamPromise={tool ? keyPromiseText(tool) : null}
      edit={pending && tool ? { fields: editFieldsOf(tool), state: opts.edit ?? null } : null}
    />,
    opts.status ?? 200,
  );
}

/**
 * What the tenant's runs moved today in each capped currency, read now from its effect shards: an
 * operator approving past a cap sees how much room the day has left. Null when a shard could not be
 * read, so the page says so instead of showing zeros.
 */
async function capsUsedToday(env: Env, tenant: string): Promise<ValueUsage[] | null> {
  const config = loadConfig(env).tenants[tenant];
  if (!config) return [];
  try {
    return await valueUsageToday(env, tenant, config);
  } catch (error) {
    console.error("value usage read failed", tenant, error);
    return null;
  }
}

/** Why an approval of a repeat was refused, and what the operator does about it on this page. */
function unconfirmedRepeat(refusal: { duplicates: readonly unknown[] }): string {
  const what =
    refusal.duplicates.length > 0
      ? "Another run asked for exactly this call"
      : "Another run already acted on the same thing";
  return `${what}: approving this one would do it again. Check the runs listed on this page, then tick “do it again anyway” and approve if that is what you mean.`;
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
    const body = await c.req.parseBody();
    const form = parseDecisionForm(decision, body.reason);
    if (!form.ok) return renderApproval(c, approvalId, { error: form.message, status: 422 });
    if (!APPROVAL_ID.test(approvalId)) return approvalNotFound(c);
    const session = c.get("session");
    const edit = decision === "approve" && body.edit === "yes" ? await editOf(c, approvalId, body) : null;
    if (edit === "not_found") return approvalNotFound(c);
    const result = await decideApproval(c.env, {
      tenant: session.tenant,
      operator: session.operator,
      operator_name: session.name,
      operator_roles: session.roles,
      approvalId,
      decision,
      reason: form.reason,
      confirm_duplicate: decision === "approve" && body.confirm_duplicate === "yes",
      args: edit?.args ?? null,
      context_digest:
        typeof body.context_digest === "string" && DIGEST.test(body.context_digest)
          ? body.context_digest
          : null,
    });
    if (!result.ok) {
      // A refused edit keeps what the operator typed, with each problem beside its input.
      const kept = (problems: EditState["problems"], confirm = false): EditState | undefined =>
        edit ? { values: edit.values, problems, confirm, note: form.reason ?? "" } : undefined;
      if (result.code === "not_found") return approvalNotFound(c);
      if (result.code === "edit_refused") {
        const { refusal } = result;
        return renderApproval(c, approvalId, {
          error: refusal.message,
          status: refusalStatus(refusal.code),
          edit: kept(refusal.problems ?? []),
        });
      }
      if (result.code === "permission_error") {
        return renderApproval(c, approvalId, { error: result.message, status: 403, edit: kept([]) });
      }
      // The page shows the duplicates and the confirmation box; the message says why it is needed,
      // in the console's words (the API's names a JSON field).
      const error = result.code === "duplicate_unconfirmed" ? unconfirmedRepeat(result) : result.message;
      return renderApproval(c, approvalId, {
        error,
        status: 409,
        edit: kept([], result.code === "duplicate_unconfirmed"),
      });
    }
    return c.redirect(`/console/approvals/${encodeURIComponent(approvalId)}?decided=${decision}`, 303);
  };
}

/**
 * The arguments of an "Edit and approve" form, read by the inputs the approval's tool declares;
 * "not_found" when the approval is not this tenant's (or its tool is gone), so nothing is decided.
 */
async function editOf(
  c: Context<ConsoleEnv>,
  approvalId: string,
  body: Record<string, unknown>,
): Promise<{ args: Record<string, unknown>; values: Record<string, string> } | "not_found"> {
  const found = await inspectApproval(c.env, c.get("session").tenant, approvalId);
  const tool = found?.tool_namespace ? catalog.find(found.tool_namespace, found.approval.tool) : undefined;
  if (!tool) return "not_found";
  return argsFromForm(editFieldsOf(tool), body);
}

/** The status of a refused edit's page, as the API answers the same refusal. */
function refusalStatus(code: string): ContentfulStatusCode {
  if (code === "permission_error") return 403;
  if (code === "conflict_error") return 409;
  return 422;
}
