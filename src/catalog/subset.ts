import type { Problem } from "../wire/envelope";
import type { ToolSpec } from "./define-tool";

/**
 * Naming tools across a tenant's namespaces: a tool is `namespace.tool`, or its bare name when only
 * one granted namespace has it. The rules a run's subset, an agent profile's `tools`, an add and a
 * `use_tool` call are all checked by. Pure.
 */

/** The discovery built-ins a run opened with a subset lists. */
export const FIND_TOOLS = "find_tools";
export const USE_TOOL = "use_tool";

/** A tool as a run's set names it: `namespace.tool`. */
export function toolRef(tool: Pick<ToolSpec, "namespace" | "name">): string {
  return `${tool.namespace}.${tool.name}`;
}

/** One granted tool by a name a caller wrote: `namespace.tool`, or a bare name granted once. */
export function findGranted<T extends Pick<ToolSpec, "namespace" | "name">>(
  granted: readonly T[],
  written: string,
): { ok: true; tool: T } | { ok: false; reason: string; hint: string } {
  const matches = written.includes(".")
    ? granted.filter((tool) => toolRef(tool) === written)
    : granted.filter((tool) => tool.name === written);
  const [only] = matches;
  if (only && matches.length === 1) return { ok: true, tool: only };
  if (matches.length > 1) {
    return {
      ok: false,
      reason: `"${written}" names a tool of several namespaces`,
      hint: `Qualify it: ${matches.map(toolRef).join(" or ")}.`,
    };
  }
  return {
    ok: false,
    reason: `"${written}" is not a tool this tenant grants`,
    hint: "Name a tool of the tenant's namespaces, such as support.lookup_order; find_tools searches them.",
  };
}

/**
 * A subset as asked (`tools` of an open, a profile, or an add), checked against the grants: each
 * entry one granted tool, no two tools of one name. The answer is the refs, in the order asked.
 */
export function resolveSubset(
  granted: readonly Pick<ToolSpec, "namespace" | "name">[],
  asked: readonly string[],
  field: string,
  already: readonly string[] = [],
): { ok: true; refs: string[] } | { ok: false; problems: Problem[] } {
  const problems: Problem[] = [];
  const refs = [...already];
  asked.forEach((written, index) => {
    const found = findGranted(granted, written);
    if (!found.ok) {
      problems.push({ field: `${field}[${index}]`, reason: found.reason, hint: found.hint });
      return;
    }
    const ref = toolRef(found.tool);
    if (refs.includes(ref)) return;
    const clash = refs.find((other) => other.split(".")[1] === found.tool.name);
    if (clash) {
      problems.push({
        field: `${field}[${index}]`,
        reason: `${ref} has the same name as ${clash}, already in the run`,
        hint: "A run's tools have distinct names; open another run for the other one.",
      });
      return;
    }
    if ([FIND_TOOLS, USE_TOOL].includes(found.tool.name)) return;
    refs.push(ref);
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, refs };
}
