import type { ToolSpec } from "../catalog/define-tool";
import type { NeutralTool } from "../wire/neutral-tool";
import { modelDescription } from "./description";
import { inputJsonSchema } from "./json-schema";

export type { NeutralTool } from "../wire/neutral-tool";

export function toNeutralTool(tool: ToolSpec): NeutralTool {
  return {
    name: tool.name,
    title: tool.title,
    version: tool.version,
    side_effect: tool.side_effect,
    description: modelDescription(tool),
    input_schema: inputJsonSchema(tool),
    dry_run: tool.dry_run,
  };
}
