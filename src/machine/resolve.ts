import type { Catalog } from "../catalog/catalog";
import type { ToolSpec } from "../catalog/define-tool";
import { FIND_TOOLS } from "../catalog/subset";
import type { FailureSpec } from "../wire/envelope";

export type Resolution = { ok: true; tool: ToolSpec } | { ok: false; refusal: FailureSpec };

/**
 * Stage "resolve": the tool a call names, looked up among the run's own tools only (its namespace,
 * or the subset it was opened with), so no other tool is callable directly.
 */
export function resolveTool(catalog: Catalog, scope: string | readonly ToolSpec[], name: string): Resolution {
  const tools = typeof scope === "string" ? catalog.tools(scope) : scope;
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool) return { ok: true, tool };
  const available = tools.map((candidate) => candidate.name);
  return {
    ok: false,
    refusal: {
      code: "not_found",
      message: `There is no tool "${name}" in this run. Use one of the listed tools${available.includes(FIND_TOOLS) ? ", or find_tools" : ""}.`,
      recommended_next_action: "use_other_tool",
      details: { available_tools: available },
    },
  };
}

/**
 * A run keeps the tools it opened with: a deploy that changed the catalog must not change a running
 * agent's tools under it, so the run is told, plainly, to start over.
 */
export function refuseChangedCatalog(runVersion: string, current: string): FailureSpec | null {
  if (current === runVersion) return null;
  return {
    code: "conflict_error",
    message: `The tool catalog changed since this run opened (${runVersion} → ${current}). Open a new run to use the current tools.`,
    recommended_next_action: "stop",
    side_effect_confirmed: false,
    details: { run_catalog_version: runVersion, current_catalog_version: current },
  };
}
