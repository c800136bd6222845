/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { DeprecatedUse } from "../deprecated-callers";

/**
 * The tenant's deprecated tools and who still calls them (`deprecated-callers.ts`): each tool's
 * notice, and the runs that called it in the page's window, so the agents behind them can be moved
 * to the successor before the sunset.
 */
export const DeprecatedTools: FC<{ uses: readonly DeprecatedUse[] }> = ({ uses }) =>
  uses.length === 0 ? null : (
    <section aria-labelledby="deprecated-heading">
      <h2 id="deprecated-heading">Deprecated tools still called</h2>
      {uses.map((use) => (
        <div class="deprecated-tool" data-tool={use.tool}>
          <h3>
            <code>{use.tool}</code>: {use.retired ? "retired" : "deprecated"} since {use.deprecated.since},
            refused from {use.deprecated.sunset}; use <code>{use.deprecated.use_instead}</code> instead.
          </h3>
          <p>{use.deprecated.why}</p>
          {use.runs.length === 0 ? (
            <p>No run called it in the last 48 hours.</p>
          ) : (
            <ul>
              {use.runs.map((run) => (
                <li>
                  <a href={`/console/runs/${encodeURIComponent(run.run_id)}`}>
                    <code>{run.run_id}</code>
                  </a>{" "}
                  ({run.namespace}, {run.state}, last active{" "}
                  {run.last_activity_at.slice(0, 16).replace("T", " ")} UTC)
                </li>
              ))}
              {use.more ? <li>and more: filter the runs by this tool to see them all.</li> : null}
            </ul>
          )}
        </div>
      ))}
    </section>
  );
