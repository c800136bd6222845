import { callAgainSentence } from "../machine/in-doubt";
import { catalog } from "../tools";

/**
 * What calling a tool again with the same arguments does after its call was cut off: resent under
 * its key only where its upstream honours keys, else settled by a read first or left to a human
 * (`machine/in-doubt.ts`). Looked up by name: a write tool's name is unique across the catalog.
 */
export function callAgainOf(name: string | null): string {
  const tool = name === null ? undefined : catalog.all().find((one) => one.name === name);
  if (!tool) return "Check with a read tool whether it happened before calling it again.";
  return tool.side_effect === "read"
    ? "Call again with the same arguments: a read is safe to repeat."
    : callAgainSentence(tool);
}
