import { RunFiltersSchema } from "../approvals/list-filters";
import type { Deprecation } from "../catalog/deprecation";
import { isRetired } from "../catalog/deprecation";
import { toolRef } from "../catalog/subset";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { listRuns } from "../ledger/operator-client";
import { catalog } from "../tools";
import type { RunSummary } from "../wire/run-summary";

/** How many of a deprecated tool's recent callers the health page names. */
const CALLERS_SHOWN = 5;

/** A deprecated tool of the tenant's namespaces, with the runs that called it lately. */
export interface DeprecatedUse {
  tool: string;
  deprecated: Deprecation;
  /** Whether its sunset has come: its calls are refused now. */
  retired: boolean;
  /** The most recent runs that called it since the page's window began, newest first. */
  runs: RunSummary[];
  /** Whether more runs called it than are named. */
  more: boolean;
}

/**
 * Who still calls the tenant's deprecated tools: for each one its namespaces serve, the runs of the
 * tenant that called it since `since`, as the tenant's directory lists them. What an operator needs
 * before a sunset: which agents to move to the successor.
 */
export async function deprecatedCallers(env: Env, tenant: string, since: number): Promise<DeprecatedUse[]> {
  const namespaces = loadConfig(env).tenants[tenant]?.namespaces ?? [];
  const deprecated = namespaces.flatMap((namespace) =>
    catalog.tools(namespace).filter((tool) => tool.deprecated),
  );
  const now = Date.now();
  return Promise.all(
    deprecated.map(async (tool) => {
      const filters = RunFiltersSchema.parse({
        tool: tool.name,
        since: new Date(since).toISOString(),
        limit: String(CALLERS_SHOWN),
      });
      const page = await listRuns(env, tenant, filters);
      const notice = tool.deprecated as Deprecation;
      return {
        tool: toolRef(tool),
        deprecated: notice,
        retired: isRetired(notice, now),
        runs: page.runs,
        more: page.next_cursor !== null,
      };
    }),
  );
}
