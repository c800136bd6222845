import { canonicalJson } from "../core/canonical-json";

/** What of a remote MCP tool's definition a pin covers: everything that changes what a call means. */
export interface PinnedDefinition {
  name: string;
  description?: string;
  /** `x-mcp-header` annotations of its parameters live in here, so they are pinned too. */
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

/**
 * The pin of a remote tool's definition: `sha256:` and the hex digest of its canonical JSON (keys
 * sorted at every depth), so a server that reorders keys or reformats has not changed the tool,
 * and any change of name, description, schema or annotation has.
 */
export async function pinOf(definition: PinnedDefinition): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(pinnedText(definition)));
  return `sha256:${[...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

/** The text a pin is the digest of: the covered fields' canonical JSON, absent ones as empty or null. */
export function pinnedText(definition: PinnedDefinition): string {
  return canonicalJson({
    name: definition.name,
    description: definition.description ?? "",
    inputSchema: definition.inputSchema ?? null,
    outputSchema: definition.outputSchema ?? null,
    annotations: definition.annotations ?? null,
  });
}
