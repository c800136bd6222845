import type { Catalog } from "../catalog/catalog";
import type { ToolSpec } from "../catalog/define-tool";

/**
 * Which tools a run sees and may call. A tenant grants the tools of its namespaces; a run reaches
 * those of the namespaces it was opened for (`reach`: the tenant's, or an agent profile's one) that
 * the tenant still has. A run opened with a `tools` subset lists only that subset (plus what was
 * added since, and the built-ins `find_tools` and `use_tool`); one opened without it lists its
 * whole namespace, as before. Pure: the catalog and the tenant's namespaces are passed in.
 */

/** `find_tools` and `use_tool` calls one run may make, together. */
export const MAX_DISCOVERY_CALLS = 20;

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
