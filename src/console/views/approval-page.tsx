/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { ApprovalRecord } from "../../approvals/model";
import type { SignedInOperator } from "../../auth/principal";
import { expiryOf } from "../../machine/answers";
import type { ApprovalDuplicate } from "../../wire/approval";
import type { ValueUsage } from "../../wire/effects";
import type { EnvironmentName } from "../../wire/envelope";
import type { RunStatus } from "../../wire/run-status";
import type { DecisionContextView } from "../decision-context";
import { displayArgs, type ToolValues } from "../display-args";
import type { DraftPreview } from "../draft-preview";
import type { EditField, EditState } from "../edit-form";
import { formatAge, formatTimestamp, formatUntil } from "../format";
import type { KeyPromiseText } from "../key-promise-text";
import { plural } from "../plural";
import { ActingUser } from "./acting-user";
import { ApprovalBadge } from "./approval-badge";
import { DecidedBy } from "./approval-table";
import { ArgsList } from "./args-list";
import { Approvers, DecisionForms } from "./decision-forms";
import { EditSummary } from "./edit-summary";
import { CapExceeded, CapsUsedToday, EarlierEffects } from "./effects-across-runs";
import { Badge, Layout, Notice } from "./layout";
import { ReasonList } from "./reasons";

export interface ApprovalPageProps {
  environment: EnvironmentName;
  session: SignedInOperator;
  approval: ApprovalRecord;
  run: RunStatus | null;
  traceLength: number;
  now: number;
  /** The money fields of the tool's namespace: amounts read in their currency. */
  money: ToolValues;
  /** Set after a decision (PRG): the page then says what the decision did, read from the ledger. */
  decided: boolean;
  /** Why the last decision was refused (expired, budget, already decided, missing reason). */
  error?: string;
  /** For an email send: the stored draft's text, exactly what will go out. */
  draft?: DraftPreview | null;
  /** What the tool says an operator needs to judge the call (a refund: the order's money), read now. */
  context?: DecisionContextView | null;
  /** The digest of the context's facts, sent with a decision for its audit receipt; null when none were shown. */
  seen?: string | null;
  /** Other runs' approvals of the same destructive call, pending or gone ahead. */
  duplicates?: readonly ApprovalDuplicate[];
  /** What the tenant moved today per capped currency (pending only); null when it could not be read. */
  valueUsage?: readonly ValueUsage[] | null;
  /** The tool's own account of what its sandbox binding simulates and what only production shows. */
  dryRun?: string | null;
  /** Whether the tool's upstream applies a key once (declared, certified or refuted), and what a doubt gets. */
  upstreamPromise?: KeyPromiseText | null;
  /** A pending approval's "Edit and approve" inputs, from the tool's schema, and a refused edit's values and problems. */
  edit?: { fields: EditField[]; state: EditState | null } | null;
}

/** The facts read for this decision, with what argues against approving marked. */
const ContextFacts: FC<{ context: DecisionContextView }> = ({ context }) => (
  <section aria-labelledby="context-heading">
    <h2 id="context-heading">What you are deciding on</h2>
    <div class="card">
      {context.problem ? (
        <Notice kind="error">
          <p>{context.problem}</p>
        </Notice>
      ) : null}
      {context.facts.length > 0 ? (
        <dl class="facts context-facts">
          {context.facts.map((fact) => (
            <>
              <dt>{fact.label}</dt>
              <dd class={fact.warning ? "fact-warning" : undefined}>
                <strong>{fact.value}</strong>
                {fact.warning ? <span class="warning-text"> ⚠ {fact.warning}</span> : null}
              </dd>
            </>
          ))}
        </dl>
      ) : null}
      <p class="hint">
        Read just now with <code>{context.source}</code>; reload the page to read it again.
      </p>
    </div>
  </section>
);

/** The warning an operator cannot miss: the same destructive call in other runs. */
const DuplicateWarning: FC<{ duplicates: readonly ApprovalDuplicate[] }> = ({ duplicates }) => (
  <div class="notice notice-warn" role="alert" id="duplicates">
    <p>
      <strong>
        Possible duplicate: {duplicates.length === 1 ? "another run" : `${duplicates.length} other runs`}{" "}
        asked for exactly this call.
      </strong>{" "}
      Approving this one too would do it again.
    </p>
    <ul>
      {duplicates.map((duplicate) => (
        <li>
          <a href={`/console/approvals/${encodeURIComponent(duplicate.approval_id)}`}>
            <code>{duplicate.approval_id}</code>
          </a>{" "}
          <Badge value={duplicate.state} /> in run{" "}
          <a href={`/console/runs/${encodeURIComponent(duplicate.run_id)}`}>
            <code>{duplicate.run_id}</code>
          </a>
          , asked {formatTimestamp(duplicate.created_at)}
          {duplicate.decided_by_name || duplicate.decided_by
            ? `, approved by ${duplicate.decided_by_name ?? duplicate.decided_by}`
            : ""}
        </li>
      ))}
    </ul>
  </div>
);

/** What an executed approval's failed call did, in words. */
const FAILED = {
  executed: "The call executed and failed",
  refused: "The upstream refused the call, and nothing was done",
  not_sent: "The call was not sent, and nothing was done",
  in_doubt: "The call was sent, and whether it took effect is unknown",
} as const satisfies Record<NonNullable<ApprovalRecord["execution"]>, string>;

/**
 * What happened, in words, from the approval's state as the ledger has it now. Computing it here
 * rather than carrying text through the redirect means a crafted URL cannot show a false outcome.
 */
const Outcome: FC<{ approval: ApprovalRecord }> = ({ approval }) => {
  const by = <DecidedBy approval={approval} now={Date.now()} />;
  const result = approval.result;
  switch (approval.state) {
    case "executed":
      if (result?.outcome === "success") {
        return (
          <Notice kind="ok">
            <p>
              Approved by {by}. The call executed once: <strong>success</strong>.
            </p>
          </Notice>
        );
      }
      return (
        <Notice kind="error">
          <p>
            Approved by {by}. {FAILED[approval.execution ?? "executed"]}:{" "}
            <strong>{result?.error?.code ?? "unknown"}</strong>. {result?.error?.message ?? ""}
          </p>
        </Notice>
      );
    case "approved":
      return (
        <Notice kind="info">
          <p>
            Approved by {by}. Whether the call took effect is not known yet
            {result?.error ? ` (${result.error.message})` : ""}; the agent's identical call resends it with
            the same idempotency key, so it still happens at most once.
          </p>
        </Notice>
      );
    case "rejected":
      return (
        <Notice kind="ok">
          <p>
            Rejected by {by}. The agent is told: “{approval.decision_reason ?? ""}”
          </p>
        </Notice>
      );
    default:
      return null;
  }
};

/** A pending approval past its SLA: when it was due, and whether the escalation role was notified. */
const OverdueNotice: FC<{ approval: ApprovalRecord; now: number }> = ({ approval, now }) => (
  <Notice kind="error">
    <p>
      <strong>Overdue:</strong> a decision was due{" "}
      {approval.sla_due_at ? formatAge(approval.sla_due_at, now) : ""}.{" "}
      {approval.escalated_at
        ? `The escalation role was notified ${formatAge(approval.escalated_at, now)}.`
        : "The escalation role is being notified."}{" "}
      It can still be decided until it expires {formatUntil(approval.expires_at, now)}.
    </p>
  </Notice>
);

const Decided: FC<{ approval: ApprovalRecord }> = ({ approval }) => (
  <section aria-labelledby="decided-heading">
    <h2 id="decided-heading">Decision</h2>
    {approval.approvals_required > 1 ? <Approvers approval={approval} /> : null}
    <dl class="facts card">
      <dt>State</dt>
      <dd>
        <ApprovalBadge approval={approval} />
      </dd>
      <dt>Decided by</dt>
      <dd>
        {approval.decided_by ? (
          <DecidedBy approval={approval} now={Date.now()} />
        ) : expiryOf(approval) === "expired_undecided" ? (
          "nobody: it expired undecided"
        ) : (
          "nobody (it expired)"
        )}
      </dd>
      {approval.decided_at ? (
        <>
          <dt>Decided at</dt>
          <dd>{formatTimestamp(approval.decided_at)}</dd>
        </>
      ) : null}
      <dt>Reason</dt>
      <dd>{approval.decision_reason ?? "—"}</dd>
      {approval.result ? (
        <>
          <dt>Result</dt>
          <dd>
            <Badge value={approval.result.outcome} />{" "}
            {approval.result.error ? `${approval.result.error.code}: ${approval.result.error.message}` : null}
            {approval.result.data !== null ? (
              <details>
                <summary>Result data</summary>
                <pre>{JSON.stringify(approval.result.data, null, 2)}</pre>
              </details>
            ) : null}
          </dd>
        </>
      ) : null}
    </dl>
  </section>
);

/** One approval: the exact call, why it needs a human, and the forms to decide it. */
export const ApprovalPage: FC<ApprovalPageProps> = (props) => {
  const { approval, session, now } = props;
  const runHref = `/console/runs/${encodeURIComponent(approval.run_id)}`;
  return (
    <Layout title={`Approval ${approval.id}`} environment={props.environment} session={session}>
      <p class="back">
        <a href="/console">← Pending approvals</a>
      </p>
      <h1>
        Approval for <code>{approval.tool}</code> <ApprovalBadge approval={approval} />
        {approval.overdue ? (
          <>
            {" "}
            <Badge value="overdue" />
          </>
        ) : null}
      </h1>
      {approval.overdue ? <OverdueNotice approval={approval} now={now} /> : null}
      {props.error ? (
        <Notice kind="error">
          <p>{props.error}</p>
        </Notice>
      ) : null}
      {props.decided ? <Outcome approval={approval} /> : null}
      {props.duplicates && props.duplicates.length > 0 ? (
        <DuplicateWarning duplicates={props.duplicates} />
      ) : null}
      {approval.earlier_effects.length > 0 ? (
        <EarlierEffects
          effects={approval.earlier_effects}
          pending={approval.state === "pending"}
          money={props.money}
        />
      ) : null}
      {approval.limit ? <CapExceeded limit={approval.limit} pending={approval.state === "pending"} /> : null}
      {props.valueUsage !== undefined && (props.valueUsage === null || props.valueUsage.length > 0) ? (
        <CapsUsedToday usage={props.valueUsage} />
      ) : null}
      {props.context ? <ContextFacts context={props.context} /> : null}
      <section aria-labelledby="call-heading">
        <h2 id="call-heading">The call</h2>
        <dl class="facts card">
          <dt>Tool</dt>
          <dd>
            <code>{approval.tool}</code> <Badge value={approval.side_effect} />
          </dd>
          {props.upstreamPromise ? (
            <>
              <dt>Upstream</dt>
              <dd id="upstream-promise">
                <code>{props.upstreamPromise.upstream}</code> {props.upstreamPromise.standing};{" "}
                {props.upstreamPromise.in_doubt}.
              </dd>
            </>
          ) : null}
          <dt>Arguments</dt>
          <dd>
            <ArgsList args={displayArgs(approval.tool, approval.args, props.money)} />
          </dd>
          {approval.edit ? (
            <>
              <dt>Edited before approval</dt>
              <dd id="edit">
                <EditSummary
                  tool={approval.tool}
                  edit={approval.edit}
                  approved={approval.args}
                  money={props.money}
                />
              </dd>
            </>
          ) : null}
          {props.draft ? (
            <>
              <dt>Email that will be sent</dt>
              <dd>
                {props.draft.problem ? (
                  <Notice kind="error">
                    <p>{props.draft.problem}</p>
                  </Notice>
                ) : null}
                {props.draft.subject !== null ? (
                  <dl class="args">
                    <dt>subject</dt>
                    <dd>{props.draft.subject}</dd>
                    <dt>body</dt>
                    <dd>{props.draft.body}</dd>
                    <dt>version</dt>
                    <dd>{String(props.draft.current_version)}</dd>
                  </dl>
                ) : null}
              </dd>
            </>
          ) : null}
          {props.dryRun ? (
            <>
              <dt>What a dry run cannot show</dt>
              <dd class="dry-run">{props.dryRun}</dd>
            </>
          ) : null}
          <dt>Why it needs approval</dt>
          <dd>
            <ReasonList tool={approval.tool} reasons={approval.reasons} />
          </dd>
          {props.run?.tainted_by ? (
            <>
              <dt>Text that tainted the run</dt>
              <dd>
                Read in call <code>{props.run.tainted_by.call_id}</code> (
                <code>{props.run.tainted_by.tool}</code>), as the model saw it:
                {/* JSX escapes it: the text is shown, never interpreted as markup. */}
                <pre class="taint-text">{props.run.tainted_by.text ?? "(not recorded)"}</pre>
              </dd>
            </>
          ) : null}
          {approval.user ? (
            <>
              <dt>On behalf of</dt>
              <dd>
                <ActingUser user={approval.user} />, as {approval.user.iss} asserted when the run opened
              </dd>
            </>
          ) : null}
          <dt>Run</dt>
          <dd>
            <a href={runHref}>
              <code>{approval.run_id}</code>
            </a>
            {props.run ? ` · ${props.run.state} · ${plural(props.traceLength, "call")} so far` : null}
          </dd>
          <dt>Requested</dt>
          <dd>
            <time datetime={approval.created_at}>{formatTimestamp(approval.created_at)}</time> (
            {formatAge(approval.created_at, now)})
          </dd>
          {approval.sla_due_at ? (
            <>
              <dt>Decision due</dt>
              <dd>
                <time datetime={approval.sla_due_at}>{formatTimestamp(approval.sla_due_at)}</time> (
                {approval.overdue
                  ? `overdue: due ${formatAge(approval.sla_due_at, now)}`
                  : formatUntil(approval.sla_due_at, now)}
                )
              </dd>
            </>
          ) : null}
          <dt>Expires</dt>
          <dd>
            <time datetime={approval.expires_at}>{formatTimestamp(approval.expires_at)}</time> (
            {formatUntil(approval.expires_at, now)})
          </dd>
          <dt>Idempotency key</dt>
          <dd>
            <code>{approval.idempotency_key}</code>
          </dd>
        </dl>
      </section>
      {approval.state === "pending" ? (
        <DecisionForms
          approval={approval}
          session={session}
          duplicates={props.duplicates ?? []}
          edit={props.edit}
          seen={props.seen ?? null}
        />
      ) : (
        <Decided approval={approval} />
      )}
      <p>
        <a href={runHref}>See the run's trace</a>
      </p>
    </Layout>
  );
};
