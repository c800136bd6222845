import type { ToolSpec } from "../catalog/define-tool";
import { deprecationNotice } from "../catalog/deprecation";

/**
 * The one description a model reads, for every spec format: the four parts of the tool's
 * description in a fixed order, so a model learns where to look for "when not to use".
 *
 * @example
 * modelDescription(lookupOrder);
 * // "Returns one order: ...\nUse when: ...\nDo not use when: ...\nSide effects: None. ..."
 */
export function modelDescription(tool: Pick<ToolSpec, "name" | "description" | "deprecated">): string {
  const { does, use_when, avoid_when, side_effects } = tool.description;
  return [
    ...(tool.deprecated ? [deprecationNotice(tool.name, tool.deprecated)] : []),
    does,
    `Use when: ${use_when}`,
    `Do not use when: ${avoid_when}`,
    `Side effects: ${side_effects}`,
  ].join("\n");
}
