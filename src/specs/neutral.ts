import type { SideEffect, ToolSpec } from "../catalog/define-tool";
import { modelDescription } from "./description";
import { inputJsonSchema, type ObjectJsonSchema } from "./json-schema";

/** A tool as a run sees it in `POST /v1/runs` and `format=jsonschema`: no vendor wrapping. */
export interface NeutralTool {
  name: string;
  title: string;
  version: string;
  side_effect: SideEffect;
  description: string;
  input_schema: ObjectJsonSchema;
}

export function toNeutralTool(tool: ToolSpec): NeutralTool {
  return {
    name: tool.name,
    title: tool.title,
    version: tool.version,
    side_effect: tool.side_effect,
    description: modelDescription(tool),
    input_schema: inputJsonSchema(tool),
  };
}
