/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { ApprovalSummary } from "../../approvals/model";
import { displayArgs, type ToolValues } from "../display-args";
import { formatAge, formatTimestamp } from "../format";
import { plural } from "../plural";
import { ApprovalBadge } from "./approval-badge";
import { ApprovalProgress } from "./approval-progress";
import { ArgsList } from "./args-list";
import { DuplicateFlag } from "./duplicate-flag";
import { Badge } from "./layout";
import { ShortId } from "./short-id";

/** Who decided an approval: their name when their key has one, their id otherwise, and when. */
export const DecidedBy: FC<{ approval: ApprovalSummary; now: number }> = ({ approval, now }) =>
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
        // Inline: the name and the time also stand inside sentences ("Approved by …").
        <span class="meta">
          {" "}
          <time datetime={approval.decided_at} title={formatTimestamp(approval.decided_at)}>
            {formatAge(approval.decided_at, now)}
          </time>
        </span>
      ) : null}
    </>
  );

/**
 * Approvals as a table, newest first: the history page's (with each one's run and request time) and
 * a run page's (`withRun` off: they all belong to the run shown).
 */
export const ApprovalTable: FC<{
  /** With `duplicates` (the directory's list), each possible duplicate is flagged as on the pending list. */
  approvals: (ApprovalSummary & { duplicates?: number })[];
  now: number;
  withRun: boolean;
  money: ToolValues;
}> = ({ approvals, now, withRun, money }) => (
  <table class="stack">
    <caption>{plural(approvals.length, "approval")}, newest first</caption>
    <thead>
      <tr>
        <th scope="col">Tool</th>
        <th scope="col">State</th>
        <th scope="col">Arguments</th>
        {withRun ? <th scope="col">Run</th> : null}
        {withRun ? <th scope="col">Requested</th> : null}
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
            <DuplicateFlag duplicates={approval.duplicates ?? 0} />
          </th>
          <td data-label="State">
            <ApprovalBadge approval={approval} />
            {approval.overdue ? (
              <>
                {" "}
                <Badge value="overdue" />
              </>
            ) : null}
            <ApprovalProgress approval={approval} />
          </td>
          <td class="args-cell" data-label="Arguments">
            <ArgsList args={displayArgs(approval.tool, approval.args, money)} short />
          </td>
          {withRun ? (
            <td data-label="Run">
              <a href={`/console/runs/${encodeURIComponent(approval.run_id)}`}>
                <ShortId id={approval.run_id} />
              </a>
            </td>
          ) : null}
          {withRun ? (
            <td data-label="Requested">
              <time datetime={approval.created_at}>{formatTimestamp(approval.created_at)}</time>
            </td>
          ) : null}
          <td data-label="Decided by">
            <DecidedBy approval={approval} now={now} />
          </td>
        </tr>
      ))}
    </tbody>
  </table>
);
