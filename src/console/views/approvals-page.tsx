/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { ApprovalSummary } from "../../approvals/model";
import type { EnvironmentName } from "../../envelope";
import { displayArgs } from "../display-args";
import { formatAge, formatTimestamp, formatUntil } from "../format";
import type { ConsoleSession } from "../session";
import { ArgsList } from "./args-list";
import { Badge, Layout } from "./layout";

export interface ApprovalsPageProps {
  environment: EnvironmentName;
  session: ConsoleSession;
  approvals: ApprovalSummary[];
  now: number;
  /** Seconds between reloads, or null when the operator paused them. */
  refreshSeconds: number | null;
}

/** The pending list: what waits for a decision, newest first, reloaded on its own. */
export const ApprovalsPage: FC<ApprovalsPageProps> = ({
  environment,
  session,
  approvals,
  now,
  refreshSeconds,
}) => (
  <Layout
    title="Pending approvals"
    environment={environment}
    session={session}
    refreshSeconds={refreshSeconds ?? undefined}
  >
    <h1>Pending approvals</h1>
    <p class="lede">
      Calls of <strong>{session.tenant}</strong>'s agents that wait for a human decision.{" "}
      {refreshSeconds ? (
        <>
          This list reloads every {refreshSeconds} s. <a href="/console?refresh=off">Pause reloading</a>
        </>
      ) : (
        <>
          Reloading is paused. <a href="/console">Resume reloading</a>
        </>
      )}
    </p>
    {approvals.length === 0 ? (
      <p class="card empty">No approvals are waiting.</p>
    ) : (
      <table>
        <caption>
          {approvals.length} pending {approvals.length === 1 ? "approval" : "approvals"}, newest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col">Side effect</th>
            <th scope="col">Arguments</th>
            <th scope="col">Run</th>
            <th scope="col">Age</th>
            <th scope="col">
              <span class="visually-hidden">Decision</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {approvals.map((approval) => (
            <tr>
              <th scope="row">
                <code>{approval.tool}</code>
                {approval.reasons.length > 0 ? <p class="meta">{approval.reasons.join("; ")}</p> : null}
              </th>
              <td>
                <Badge value={approval.side_effect} />
              </td>
              <td class="args-cell">
                <ArgsList args={displayArgs(approval.tool, approval.args)} short />
              </td>
              <td>
                <a href={`/console/runs/${encodeURIComponent(approval.run_id)}`}>
                  <code class="run-id">{approval.run_id}</code>
                </a>
              </td>
              <td>
                <time datetime={approval.created_at} title={formatTimestamp(approval.created_at)}>
                  {formatAge(approval.created_at, now)}
                </time>
                <p class="meta">expires {formatUntil(approval.expires_at, now)}</p>
              </td>
              <td>
                <a class="button" href={`/console/approvals/${encodeURIComponent(approval.id)}`}>
                  Review
                  <span class="visually-hidden">
                    {" "}
                    {approval.tool} requested {formatAge(approval.created_at, now)}
                  </span>
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </Layout>
);
