// What both importers draft for a namespace of more tools than a run lists at once: a proposed
// default set behind a draft marker (`check` refuses it until someone decides), and the bound past
// which a document or a server is narrowed with --operations or --tools.
import { MAX_TOOLS_PER_NAMESPACE } from "../../src/catalog/catalog";
import { MAX_LISTED_TOOLS } from "../../src/catalog/default-tools";

/** The draft of `default_tools`, or null when a run can list every tool drafted. */
export function draftDefaultTools(names: readonly string[]): { draft: string[]; why: string } | null {
  if (names.length <= MAX_LISTED_TOOLS) return null;
  return {
    draft: names.slice(0, MAX_LISTED_TOOLS),
    why: `proposed: the first ${MAX_LISTED_TOOLS} drafted. A run opened without a subset lists these (at most ${MAX_LISTED_TOOLS}) and finds the other ${names.length - MAX_LISTED_TOOLS} with find_tools: keep the ones most tasks need`,
  };
}

/** The review note beside a drafted default set. */
export function defaultToolsNote(count: number): string {
  return `default_tools: ${count} tools drafted, more than a run lists at once (${MAX_LISTED_TOOLS}); choose the ones most tasks need`;
}

/** Why a draft of `count` tools is refused, or null: a namespace holds at most MAX_TOOLS_PER_NAMESPACE. */
export function tooManyTools(count: number, option: "--operations" | "--tools"): string | null {
  if (count <= MAX_TOOLS_PER_NAMESPACE) return null;
  return `${count} tools; a namespace holds at most ${MAX_TOOLS_PER_NAMESPACE}: choose with ${option} a,b, or import the rest into another namespace`;
}
