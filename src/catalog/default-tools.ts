import type { ToolSpec } from "./define-tool";

/**
 * What a run lists at once stays small whatever its namespace holds: a run lists its task's tools
 * (the `tools` it was opened with, or its agent profile's), else its namespace's declared default
 * set, else (a namespace of at most `MAX_LISTED_TOOLS`) the whole namespace. The rest of the
 * namespace is found with `find_tools` and called with `use_tool`. Pure.
 */

/** The most tools a run opened without a subset lists: a model still chooses well among them. */
export const MAX_LISTED_TOOLS = 10;

/** A broken rule of a namespace's default set, reported at the tool `tool` of the namespace. */
export interface DefaultSetProblem {
  tool: string;
  message: string;
}

/**
 * The default-set rules of one namespace's own tools (the built-ins, `read_result_page`, do not
 * count): a namespace of more than `MAX_LISTED_TOOLS` tools declares which of them a run opened
 * without a subset lists, and that set is itself at most `MAX_LISTED_TOOLS`.
 */
export function defaultSetProblems(namespace: string, own: readonly ToolSpec[]): DefaultSetProblem[] {
  const listed = own.filter((tool) => tool.listed_by_default);
  const [first] = own;
  if (first === undefined) return [];
  if (listed.length > MAX_LISTED_TOOLS) {
    return [
      {
        tool: listed[MAX_LISTED_TOOLS]?.name ?? first.name,
        message: `namespace "${namespace}" lists ${listed.length} tools by default; at most ${MAX_LISTED_TOOLS}, the ones most of its runs need (the rest are found with find_tools)`,
      },
    ];
  }
  if (own.length > MAX_LISTED_TOOLS && listed.length === 0) {
    return [
      {
        tool: own[MAX_LISTED_TOOLS]?.name ?? first.name,
        message: `namespace "${namespace}" has ${own.length} tools, more than a run lists at once (${MAX_LISTED_TOOLS}): declare default_tools, the ones a run opened without a subset lists; it finds the rest with find_tools and calls them with use_tool`,
      },
    ];
  }
  return [];
}

/** The tools a run opened without a subset lists, by name: its default set, or null for every tool. */
export function defaultSetOf(own: readonly ToolSpec[]): string[] | null {
  const listed = own.filter((tool) => tool.listed_by_default).map((tool) => tool.name);
  return listed.length > 0 ? listed : null;
}
