import type { ToolSpec } from "../catalog/define-tool";
import { modelDescription } from "./description";
import { inputJsonSchema, type JsonSchema, withoutDialect } from "./json-schema";

/** An Anthropic Messages API client tool (`tools: [...]`). */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

/**
 * The tool for Claude's Messages API. The schema keeps every constraint (lengths, patterns,
 * bounds): Anthropic takes full JSON Schema for client tools, and each constraint is a hint the
 * model can follow before the proxy has to refuse a call.
 *
 * @example
 * await anthropic.messages.create({ model, max_tokens, messages, tools: tools.map(toAnthropicTool) });
 */
export function toAnthropicTool(tool: ToolSpec): AnthropicTool {
  return {
    name: tool.name,
    description: modelDescription(tool),
    input_schema: withoutDialect(inputJsonSchema(tool)),
  };
}
