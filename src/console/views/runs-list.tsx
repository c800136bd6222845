/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { RunSummary } from "../../wire/run-summary";
import { formatAge, formatTimestamp } from "../format";
import { plural } from "../plural";
import { Pager } from "./filter-form";
import { Badge } from "./layout";
import { LiveStamp } from "./live-region";
import { ShortId } from "./short-id";

export interface RunsListProps {
  runs: RunSummary[];
  now: number;
  live: boolean;
  newest: string | null;
  older: string | null;
}

const Chips: FC<{ items: readonly string[]; empty: string }> = ({ items, empty }) =>
  items.length === 0 ? (
    <span class="meta">{empty}</span>
  ) : (
    <ul class="chips">
      {items.map((item) => (
        <li>
          <code>{item}</code>
        </li>
      ))}
    </ul>
  );

/**
 * One page of runs, newest first. Rendered into the runs page and, alone, as its live fragment
 * (`/console/fragments/runs`), so both show exactly the same markup.
 */
export const RunsList: FC<RunsListProps> = ({ runs, now, live, newest, older }) => (
  <>
    <LiveStamp now={now} live={live} />
    {runs.length === 0 ? (
      <p class="card empty">No runs match.</p>
    ) : (
      <table class="stack">
        <caption>{plural(runs.length, "run")}, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">State</th>
            <th scope="col">Ids named</th>
            <th scope="col">Tools</th>
            <th scope="col">Calls</th>
            <th scope="col">Opened</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr>
              <th scope="row" data-label="Run">
                <a href={`/console/runs/${encodeURIComponent(run.run_id)}`}>
                  <ShortId id={run.run_id} />
                </a>
                <p class="meta">namespace {run.namespace}</p>
              </th>
              <td data-label="State">
                <Badge value={run.state} />
              </td>
              <td data-label="Ids named">
                <Chips items={run.subjects} empty="none" />
              </td>
              <td data-label="Tools">
                <Chips items={run.tools} empty="no calls yet" />
              </td>
              <td data-label="Calls">{run.calls_used}</td>
              <td data-label="Opened">
                <time datetime={run.created_at} title={formatTimestamp(run.created_at)}>
                  {formatAge(run.created_at, now)}
                </time>
                <p class="meta">last activity {formatAge(run.last_activity_at, now)}</p>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    <Pager newest={newest} older={older} />
  </>
);
