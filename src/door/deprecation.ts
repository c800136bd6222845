import type { ToolSpec } from "../catalog/define-tool";
import { catalog } from "../tools";
import type { Envelope } from "../wire/envelope";

/** The tool an answer names: the caller's namespace first, then any (tool names are unique across the catalog). */
function toolNamed(name: string, namespace: string): ToolSpec | undefined {
  const home = catalog.find(namespace, name);
  if (home) return home;
  for (const other of catalog.namespaces()) {
    const tool = catalog.find(other, name);
    if (tool) return tool;
  }
  return undefined;
}

/**
 * Every answer of a deprecated tool carries its notice (`catalog/deprecation.ts`): the envelope's
 * `deprecation`, which a REST answer also sends as its `Deprecation` and `Sunset` headers and an
 * MCP answer puts in the text the model reads. Added at the door, so a replayed answer carries it too.
 */
export function withDeprecation(envelope: Envelope, namespace: string): Envelope {
  if (envelope.tool === null) return envelope;
  const deprecated = toolNamed(envelope.tool, namespace)?.deprecated;
  return deprecated ? { ...envelope, deprecation: { ...deprecated } } : envelope;
}
