import type { SideEffect, ToolSpec } from "../catalog/define-tool";
import { assertNever } from "../wire/envelope";
import { modelDescription } from "./description";
import { envelopeJsonSchema, inputJsonSchema, type ObjectJsonSchema } from "./json-schema";

/** MCP `ToolAnnotations`: hints a client uses to decide what to confirm with its user. */
export interface McpToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: boolean;
}

/** An MCP `Tool` as `tools/list` returns it. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: ObjectJsonSchema;
  outputSchema: ObjectJsonSchema;
  annotations: McpToolAnnotations;
}

/**
 * Annotations from the side effect class. Drafts, writes and destructive calls are idempotent because the
 * proxy derives a key from the arguments: an identical call in the same run replays, it never
 * acts twice. The destructive/idempotent hints mean nothing for a read tool, so they are omitted.
 */
export function annotationsFor(sideEffect: SideEffect, openWorld: boolean): McpToolAnnotations {
  switch (sideEffect) {
    case "read":
      return { readOnlyHint: true, openWorldHint: openWorld };
    // A draft stores something (not read-only) but changes nothing a person sees: not destructive.
    case "draft":
    case "write":
      return { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: openWorld };
    case "destructive":
      return { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: openWorld };
    default:
      return assertNever(sideEffect);
  }
}

/**
 * `openWorldHint`, derived from the catalog rather than set per tool: true when the tool reaches
 * beyond the tenant's own systems (`open_world`) or when its output holds third-party text (any
 * `untrusted` field, fenced by the proxy), since a client that trusts a closed-world tool's output
 * would trust whatever an outsider wrote into it.
 */
export function openWorldOf(tool: Pick<ToolSpec, "open_world" | "untrusted">): boolean {
  return tool.open_world || tool.untrusted.length > 0;
}

/**
 * The tool as MCP describes it. `outputSchema` is the envelope (with `data` narrowed to the tool's
 * output), because every `tools/call` result carries the envelope as `structuredContent`.
 */
export function toMcpTool(tool: ToolSpec): McpTool {
  return {
    name: tool.name,
    title: tool.title,
    description: modelDescription(tool),
    inputSchema: inputJsonSchema(tool),
    outputSchema: envelopeJsonSchema(tool),
    annotations: annotationsFor(tool.side_effect, openWorldOf(tool)),
  };
}
