/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { ApprovalListItem } from "../../wire/approval";
import { displayArgs, type ToolValues } from "../display-args";
import { formatAge, formatTimestamp, formatUntil } from "../format";
import { plural } from "../plural";
import { ActingUser } from "./acting-user";
import { ApprovalProgress } from "./approval-progress";
import { ArgsList } from "./args-list";
import { DuplicateFlag } from "./duplicate-flag";
import { Badge } from "./layout";
import { LiveStamp } from "./live-region";
import { ReasonLine } from "./reasons";
import { ShortId } from "./short-id";

export interface PendingListProps {
  approvals: ApprovalListItem[];
  /** True when more are waiting than the list shows. */
  more: boolean;
  now: number;
  live: boolean;
  /** The money fields of the tenant's tools: amounts read in their currency. */
  money: ToolValues;
}

/**
 * What waits for a decision, newest first. Rendered into the pending page and, alone, as its live
 * fragment (`/console/fragments/pending`), so both show exactly the same markup.
 */
export const PendingList: FC<PendingListProps> = ({ approvals, more, now, live, money }) => (
  <>
    <LiveStamp now={now} live={live} />
    {approvals.length === 0 ? (
      <p class="card empty">No approvals are waiting.</p>
    ) : (
      <table class="stack">
        <caption>{plural(approvals.length, "pending approval")}, newest first</caption>
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
              <th scope="row" data-label="Tool">
                <code>{approval.tool}</code>
                <ReasonLine tool={approval.tool} reasons={approval.reasons} />
                <ApprovalProgress approval={approval} />
                <DuplicateFlag duplicates={approval.duplicates} />
              </th>
              <td data-label="Side effect">
                <Badge value={approval.side_effect} />
              </td>
              <td class="args-cell" data-label="Arguments">
                <ArgsList args={displayArgs(approval.tool, approval.args, money)} short />
              </td>
              <td data-label="Run">
                <a href={`/console/runs/${encodeURIComponent(approval.run_id)}`}>
                  <ShortId id={approval.run_id} />
                </a>
                {approval.user ? (
                  <p class="meta">
                    for <ActingUser user={approval.user} />
                  </p>
                ) : null}
              </td>
              <td data-label="Age">
                <time datetime={approval.created_at} title={formatTimestamp(approval.created_at)}>
                  {formatAge(approval.created_at, now)}
                </time>
                {approval.overdue ? (
                  <p class="meta">
                    <Badge value="overdue" /> decision was due{" "}
                    {approval.sla_due_at ? formatAge(approval.sla_due_at, now) : ""}
                  </p>
                ) : null}
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
    {more ? (
      <p class="pager">
        More are waiting than this list shows.{" "}
        <a href="/console/approvals?state=pending">See every pending approval</a>
      </p>
    ) : null}
  </>
);
