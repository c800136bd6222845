import type { ToolSpec } from "../catalog/define-tool";
import { toolRef } from "../catalog/subset";
import { changedParts, PART_WORDS, type ToolVersion } from "../catalog/tool-version";
import type { FailureSpec } from "../wire/envelope";

/**
 * What a run pins of its tools: each tool's version (`catalog/tool-version.ts`) as the run was shown
 * it or first called it, by `namespace.tool`. A call of a tool whose version moved since is refused
 * once with `tool_changed`, saying what changed, and the run is pinned to the new version: the
 * refusal is how it learns the new contract. Only that tool is affected; a change to any other
 * tool, namespace or tenant changes nothing of the run. Null pins a tool the run was shown under an
 * earlier catalog than the one it was created under (an open that stored nothing, created later):
 * what it was shown is unknown, so its first call is told the tool may have changed.
 */
export type ToolPins = Readonly<Record<string, ToolVersion | null>>;

/** What a call finds of its tool's pin. */
export type PinCheck =
  /** The run pinned this very version, or the tool is the run's own built-in: nothing to do. */
  | { kind: "same" }
  /** The run has not seen the tool yet (found, added or created since): it is pinned with the call. */
  | { kind: "new"; pins: ToolPins }
  /** The tool changed under the run: the call is refused, and the run pinned to the version it now knows. */
  | { kind: "changed"; refusal: FailureSpec; pins: ToolPins };

/** The pins of tools a run is shown, by their versions in the same order. */
export function pinsOf(tools: readonly ToolSpec[], versions: readonly (ToolVersion | null)[]): ToolPins {
  const pins: Record<string, ToolVersion | null> = {};
  tools.forEach((tool, index) => {
    pins[toolRef(tool)] = versions[index] ?? null;
  });
  return pins;
}

/** Whether a tool is pinned at all: a built-in acts on the run itself and changes only with the proxy. */
export function isPinned(tool: ToolSpec): boolean {
  return tool.builtin === null;
}

/** A call's tool against the run's pin of it, the tool's version being `current`. */
export function checkPin(pins: ToolPins | undefined, tool: ToolSpec, current: ToolVersion): PinCheck {
  if (!isPinned(tool)) return { kind: "same" };
  const ref = toolRef(tool);
  const known = pins ?? {};
  if (!(ref in known)) return { kind: "new", pins: { [ref]: current } };
  const pinned = known[ref] ?? null;
  if (pinned !== null && pinned.version === current.version) return { kind: "same" };
  return { kind: "changed", refusal: toolChangedSpec(tool, pinned, current), pins: { [ref]: current } };
}

/** What changed of a tool, in words; `pinned` null when the run's view of it is unknown. */
export function changeWords(pinned: ToolVersion | null, current: ToolVersion): string {
  if (pinned === null) return "the catalog changed since this run's tools were listed";
  const words = changedParts(pinned.parts, current.parts).map((part) => PART_WORDS[part]);
  return words.length > 0 ? words.join(", ") : "its contract";
}

/** The refusal of a call whose tool changed under the run: what changed, and to list the tools again. */
export function toolChangedSpec(
  tool: ToolSpec,
  pinned: ToolVersion | null,
  current: ToolVersion,
): FailureSpec {
  return {
    code: "tool_changed",
    message: `The tool ${tool.name} changed since this run last saw it (${changeWords(pinned, current)}), so this call was not made. List the tools again and read ${tool.name}'s definition, then call it as it is now.`,
    details: {
      tool: toolRef(tool),
      changed: pinned === null ? null : changedParts(pinned.parts, current.parts),
      run_tool_version: pinned?.version ?? null,
      current_tool_version: current.version,
    },
  };
}
