/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { ApprovalSummary } from "../../approvals/model";
import type { EnvironmentName, Problem } from "../../envelope";
import type { ApprovalListItem } from "../../wire/approval";
import type { SignedInOperator } from "../console-env";
import { displayArgs } from "../display-args";
import { formatAge, formatTimestamp } from "../format";
import { ArgsList } from "./args-list";
import { FilterForm, Pager } from "./filter-form";
import { Badge, Layout } from "./layout";

export interface HistoryPageProps {
  environment: EnvironmentName;
  session: SignedInOperator;
  values: Record<string, string>;
  states: readonly string[];
  tools: readonly string[];
  problems: readonly Problem[];
  approvals: ApprovalListItem[];
  now: number;
  newest: string | null;
  older: string | null;
}

/** Who decided an approval: their name when their key has one, their id otherwise. */
const DecidedBy: FC<{ approval: ApprovalSummary; now: number }> = ({ approval, now }) =>
  approval.decided_by === null ? (
    <span class="meta">not decided</span>
  ) : (
    <>
      {approval.decided_by_name ? (
        <strong title={approval.decided_by}>{approval.decided_by_name}</strong>
      ) : (
        <code>{approval.decided_by}</code>
      )}
      {approval.decided_at ? (
        <p class="meta">
          <time datetime={approval.decided_at} title={formatTimestamp(approval.decided_at)}>
            {formatAge(approval.decided_at, now)}
          </time>
        </p>
      ) : null}
    </>
  );

/** Every approval of the tenant, in every state, newest first, filtered and paged. */
export const HistoryPage: FC<HistoryPageProps> = ({
  environment,
  session,
  values,
  states,
  tools,
  problems,
  approvals,
  now,
  newest,
  older,
}) => (
  <Layout title="Approval history" environment={environment} session={session} section="approvals">
    <h1>Approval history</h1>
    <p class="lede">
      Every call of <strong>{session.tenant}</strong>'s agents that asked for a human, whatever became of it.
    </p>
    <FilterForm
      action="/console/approvals"
      fields={["subject", "state", "tool", "run_id", "since", "until"]}
      values={values}
      states={states}
      tools={tools}
      problems={problems}
    />
    {problems.length > 0 ? null : approvals.length === 0 ? (
      <p class="card empty">No approvals match.</p>
    ) : (
      <table class="stack">
        <caption>
          {approvals.length} {approvals.length === 1 ? "approval" : "approvals"}, newest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col">State</th>
            <th scope="col">Arguments</th>
            <th scope="col">Run</th>
            <th scope="col">Requested</th>
            <th scope="col">Decided by</th>
          </tr>
        </thead>
        <tbody>
          {approvals.map((approval) => (
            <tr>
              <th scope="row" data-label="Tool">
                <a href={`/console/approvals/${encodeURIComponent(approval.id)}`}>
                  <code>{approval.tool}</code>
                </a>
              </th>
              <td data-label="State">
                <Badge value={approval.state} />
              </td>
              <td class="args-cell" data-label="Arguments">
                <ArgsList args={displayArgs(approval.tool, approval.args)} short />
              </td>
              <td data-label="Run">
                <a href={`/console/runs/${encodeURIComponent(approval.run_id)}`}>
                  <code class="run-id">{approval.run_id}</code>
                </a>
              </td>
              <td data-label="Requested">
                <time datetime={approval.created_at}>{formatTimestamp(approval.created_at)}</time>
              </td>
              <td data-label="Decided by">
                <DecidedBy approval={approval} now={now} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    <Pager newest={newest} older={older} />
  </Layout>
);
