import { resolveSubset, toolRef } from "../catalog/subset";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import type { AddToolsAnswer } from "../ledger/ledger-api";
import { grantedTools, type RunToolSet, reachOf, runTools } from "../machine/grants";
import type { RunMeta } from "../machine/run-state";
import { isPinned, pinsOf, type ToolPins } from "../machine/tool-pins";
import { catalog, discoveryTools } from "../tools";

/** The run's tool set (opened subset, added tools, reach), for its spec export. */
export function toolSetOf(run: RunMeta): RunToolSet {
  return {
    namespace: run.namespace,
    tools: run.tools ?? null,
    added_tools: run.added_tools ?? [],
    reach: reachOf(run),
  };
}

/**
 * Granted tools added to an open run, by name (`POST /v1/runs/{run_id}/tools`): checked against the
 * tenant's grants as they are now, so nothing outside them is ever added. Tools the run has already
 * are left as they are. The run's added tools as they are to be stored, or why none are.
 */
export function toolsToAdd(
  env: Env,
  run: RunMeta | null,
  asked: string[],
): Exclude<AddToolsAnswer, { kind: "added" }> | { kind: "add"; run: RunMeta; added: string[] } {
  if (!run) return { kind: "not_found" };
  if (run.state === "closed") return { kind: "closed" };
  const namespaces = loadConfig(env).tenants[run.tenant]?.namespaces ?? [];
  const have = runTools(catalog, run, [])
    .filter((tool) => tool.builtin === null)
    .map(toolRef);
  const resolved = resolveSubset(grantedTools(catalog, reachOf(run), namespaces), asked, "tools", have);
  if (!resolved.ok) return { kind: "refused", problems: resolved.problems };
  return {
    kind: "add",
    run,
    added: [...(run.added_tools ?? []), ...resolved.refs.filter((ref) => !have.includes(ref))],
  };
}

/** What a new run is shown: the catalog's version, and the version of each tool it lists (its pins). */
export interface ShownTools {
  catalog_version: string;
  tool_versions: ToolPins;
}

/**
 * What a run opened with `set` is shown now. A run created later from an open that stored nothing
 * (`shownUnder`: the catalog version its open showed) under another catalog pins its tools as
 * unknown: what that open listed is not known here, so each tool's first call says it may have changed.
 */
export async function shownTools(set: RunToolSet, shownUnder?: string): Promise<ShownTools> {
  const current = await catalog.version();
  const tools = runTools(catalog, set, discoveryTools(set.namespace)).filter(isPinned);
  if (shownUnder !== undefined && shownUnder !== current) {
    return { catalog_version: shownUnder, tool_versions: pinsOf(tools, []) };
  }
  const versions = await Promise.all(tools.map((tool) => catalog.toolVersion(tool)));
  return { catalog_version: current, tool_versions: pinsOf(tools, versions) };
}
