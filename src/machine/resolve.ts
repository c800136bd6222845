import type { Catalog } from "../catalog/catalog";
import type { ToolSpec } from "../catalog/define-tool";
import { isRetired } from "../catalog/deprecation";
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
 * A deprecated tool past its sunset is refused for good, pointing at its successor; before it, the
 * call goes on and its answer carries the notice (`catalog/deprecation.ts`).
 */
export function refuseRetired(tool: ToolSpec, now: number): FailureSpec | null {
  const deprecated = tool.deprecated;
  if (!deprecated || !isRetired(deprecated, now)) return null;
  return {
    code: "tool_retired",
    message: `${tool.name} was retired on ${deprecated.sunset}: ${deprecated.why} This call was not made; use ${deprecated.use_instead} instead.`,
    details: { ...deprecated },
  };
}
