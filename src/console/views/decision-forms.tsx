/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import { approvalProgress, holdsRole, samePerson } from "../../approvals/approvers";
import type { ApprovalRecord } from "../../approvals/model";
import type { SignedInOperator } from "../../auth/principal";
import type { ApprovalDuplicate } from "../../wire/approval";
import { formValuesOf } from "../edit-form";
import { formatTimestamp } from "../format";
import type { ApprovalPageProps } from "./approval-page";
import { EditApproveForm } from "./edit-approve-form";
import { Notice } from "./layout";

/** Roles as a sentence names them: “support_lead” or “finance_lead”. */
const quoted = (roles: readonly string[]) => roles.map((role) => `“${role}”`).join(" or ");

/** Who may decide it and, when it needs two, who approved so far ("1 of 2"). */
export const Approvers: FC<{ approval: ApprovalRecord }> = ({ approval }) => (
  <dl class="facts card" id="approvers">
    <dt>Who decides</dt>
    <dd>
      {approval.approver_roles.length > 0
        ? `an operator holding the role ${quoted(approval.approver_roles)}`
        : "any operator of the tenant"}
      {approval.approvals_required > 1
        ? `; ${approval.approvals_required} different operators must approve (one rejection ends it)`
        : null}
    </dd>
    {approval.approvals_required > 1 ? (
      <>
        <dt>Approvals</dt>
        <dd>
          <strong>{approvalProgress(approval.approvers, approval.approvals_required)}</strong>
          {approval.approvers.map((approver) => (
            <span>
              {" · "}
              {approver.name ?? <code>{approver.operator}</code>} at{" "}
              <time datetime={approver.at}>{formatTimestamp(approver.at)}</time>
            </span>
          ))}
        </dd>
      </>
    ) : null}
  </dl>
);

/**
 * The decision section of a pending approval's page: approve, approve with an edit, or reject, for
 * an operator whose roles may decide it; for any other, why the page is read-only.
 */
export const DecisionForms: FC<{
  approval: ApprovalRecord;
  session: SignedInOperator;
  duplicates: readonly ApprovalDuplicate[];
  edit: ApprovalPageProps["edit"];
  /** The digest of the decision context the page showed, posted with the decision (its audit receipt). */
  seen: string | null;
}> = ({ approval, session, duplicates, edit, seen }) => {
  const base = `/console/approvals/${encodeURIComponent(approval.id)}`;
  if (!holdsRole(approval.approver_roles, session.roles)) {
    // Read-only: the forms would only be refused.
    return (
      <section aria-labelledby="decide-heading">
        <h2 id="decide-heading">Decision</h2>
        <Approvers approval={approval} />
        <Notice kind="info">
          Only an operator holding the role {quoted(approval.approver_roles)} may decide this approval; your
          key holds {session.roles.length > 0 ? quoted(session.roles) : "no role"}. You can read it, not
          decide it.
        </Notice>
      </section>
    );
  }
  const me = { operator: session.operator, name: session.name };
  const approvedByMe = approval.approvers.some((approver) => samePerson(approver, me));
  const last = approval.approvers.length + 1 >= approval.approvals_required;
  // The same confirmation for both kinds of repeat: the operator API refuses an approval of either
  // without it, so the box must be there whenever one of them is shown.
  const otherRuns = new Set([
    ...duplicates.map((duplicate) => duplicate.run_id),
    ...approval.earlier_effects.map((effect) => effect.run_id),
  ]).size;
  return (
    <section aria-labelledby="decide-heading">
      <h2 id="decide-heading">Decision</h2>
      {approval.approver_roles.length > 0 || approval.approvals_required > 1 ? (
        <Approvers approval={approval} />
      ) : null}
      {approvedByMe ? (
        <Notice kind="info">
          You approved this ({approvalProgress(approval.approvers, approval.approvals_required)}): it executes
          when a second, different operator approves. You can still reject it.
        </Notice>
      ) : null}
      <div class="decide">
        {approvedByMe ? null : (
          <form method="post" action={`${base}/approve`} class="panel card">
            <input type="hidden" name="csrf" value={session.csrf} />
            {seen ? <input type="hidden" name="context_digest" value={seen} /> : null}
            <h3>Approve</h3>
            <p class="hint">
              {last
                ? "The call executes once, now, recorded as "
                : `Your approval is recorded as ${approval.approvers.length + 1} of ${approval.approvals_required}; the call executes only when another operator approves too. Recorded as `}
              {session.name ? <strong>{session.name}</strong> : <code>{session.operator}</code>}.
            </p>
            {otherRuns > 0 ? (
              <label class="confirm">
                <input type="checkbox" name="confirm_duplicate" value="yes" required />I checked the other{" "}
                {otherRuns === 1 ? "run" : "runs"}: do it again anyway.
              </label>
            ) : null}
            {approval.limit ? (
              <p class="hint">
                This goes beyond the {approval.limit.currency} cap: it is recorded as an operator override.
              </p>
            ) : null}
            <label for="approve-reason">Note (optional)</label>
            <textarea id="approve-reason" name="reason" maxlength={500} rows={2} />
            <button type="submit" class="approve">
              {last
                ? "Approve and execute"
                : `Approve (${approval.approvers.length + 1} of ${approval.approvals_required})`}
            </button>
          </form>
        )}
        <form method="post" action={`${base}/reject`} class="panel card">
          <input type="hidden" name="csrf" value={session.csrf} />
          {seen ? <input type="hidden" name="context_digest" value={seen} /> : null}
          <h3>Reject</h3>
          <p class="hint" id="reject-hint">
            Nothing executes. The agent is told your reason.
          </p>
          <label for="reject-reason">Reason (required)</label>
          <textarea
            id="reject-reason"
            name="reason"
            maxlength={500}
            rows={2}
            required
            aria-describedby="reject-hint"
          />
          <button type="submit" class="reject">
            Reject
          </button>
        </form>
      </div>
      {edit && !approvedByMe ? (
        <EditApproveForm
          action={`${base}/approve`}
          csrf={session.csrf}
          seen={seen}
          fields={edit.fields}
          values={edit.state?.values ?? formValuesOf(edit.fields, approval.args)}
          state={edit.state}
          otherRuns={otherRuns}
          label={
            last
              ? "Approve edited call"
              : `Approve edited call (${approval.approvers.length + 1} of ${approval.approvals_required})`
          }
        />
      ) : null}
    </section>
  );
};
