import type { Catalog } from "../catalog/catalog";
import type { ToolSpec } from "../catalog/define-tool";
import type { Problem } from "../wire/envelope";

/**
 * Which tools a run sees and may call. A tenant grants the tools of its namespaces; a run reaches
 * those of the namespaces it was opened for (`reach`: the tenant's, or an agent profile's one) that
 * the tenant still has. A run opened with a `tools` subset lists only that subset (plus what was
 * added since, and the built-ins `find_tools` and `use_tool`); one opened without it lists its
 * whole namespace, as before. Pure: the catalog and the tenant's namespaces are passed in.
 */

export const FIND_TOOLS = "find_tools";
export const USE_TOOL = "use_tool";
/** `find_tools` and `use_tool` calls one run may make, together. */
export const MAX_DISCOVERY_CALLS = 20;

/** A tool as a run's set names it: `namespace.tool`. */
export function toolRef(tool: Pick<ToolSpec, "namespace" | "name">): string {
  return `${tool.namespace}.${tool.name}`;
}

/** What a run may see and reach, as its ledger stores it. */
export interface RunToolSet {
  namespace: string;
  /** The opened subset as refs; null (or absent) for the whole namespace. */
  tools?: readonly string[] | null | undefined;
  /** Refs added since by `POST /v1/runs/{run_id}/tools`. */
  added_tools?: readonly string[] | undefined;
  /** The namespaces `find_tools`, `use_tool` and added tools may come from; its own when absent. */
  reach?: readonly string[] | undefined;
}

/** The namespaces a run reaches. */
export function reachOf(set: RunToolSet): readonly string[] {
  return set.reach ?? [set.namespace];
}

/**
 * The tools the tenant grants a run: every tool of the run's reach that the tenant still has, in
 * catalog order, without the per-namespace built-ins (they act on the run itself).
 */
export function grantedTools(
  catalog: Catalog,
  reach: readonly string[],
  tenantNamespaces: readonly string[],
): ToolSpec[] {
  return reach
    .filter((namespace) => tenantNamespaces.includes(namespace))
    .flatMap((namespace) => catalog.tools(namespace))
    .filter((tool) => tool.builtin === null);
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

/** The tools named by refs, in catalog order; refs of tools no longer served are skipped. */
function toolsOf(catalog: Catalog, refs: readonly string[]): ToolSpec[] {
  return refs.flatMap((ref) => {
    const [namespace = "", name = ""] = ref.split(".");
    const tool = catalog.find(namespace, name);
    return tool ? [tool] : [];
  });
}

/**
 * The tools a run lists and calls directly, in a fixed order: its opened subset with the home
 * namespace's built-ins and the discovery built-ins (or, opened without one, its whole namespace),
 * then what was added since. `listed: "opened"` leaves the added ones out: an MCP listing never
 * changes because of another request.
 */
export function runTools(
  catalog: Catalog,
  set: RunToolSet,
  discovery: readonly ToolSpec[],
  listed: "opened" | "all" = "all",
): ToolSpec[] {
  const home = catalog.tools(set.namespace);
  const opened =
    set.tools == null
      ? home
      : [...toolsOf(catalog, set.tools), ...home.filter((tool) => tool.builtin !== null), ...discovery];
  if (listed === "opened") return opened;
  const names = new Set(opened.map((tool) => tool.name));
  return [...opened, ...toolsOf(catalog, set.added_tools ?? []).filter((tool) => !names.has(tool.name))];
}

/**
 * A tool of the run by name, for what the run already recorded (an approval's tool, a
 * postcondition's read): its home namespace first, then its reach.
 */
export function toolOfRun(
  catalog: Catalog,
  run: Pick<RunToolSet, "namespace" | "reach">,
  name: string,
): ToolSpec | undefined {
  for (const namespace of [run.namespace, ...reachOf(run)]) {
    const tool = catalog.find(namespace, name);
    if (tool) return tool;
  }
  return undefined;
}
