import type { ToolSpec } from "../catalog/define-tool";
import { modelDescription } from "./description";
import { inputJsonSchema, type JsonSchema, withoutDialect } from "./json-schema";

/** An OpenAI Chat Completions function tool (`tools: [...]`). */
export interface OpenAiTool {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchema; strict: true };
}

/** An OpenAI Responses API function tool (`tools: [...]`): the same fields, flat beside `type`. */
export interface OpenAiResponsesTool {
  type: "function";
  name: string;
  description: string;
  parameters: JsonSchema;
  strict: true;
}

/**
 * Keywords OpenAI's strict mode refuses. The proxy still enforces them when it validates; the
 * model learns them from the field description instead.
 */
const LENGTH_KEYWORDS = ["minLength", "maxLength"] as const;

function mentions(text: string, value: number): boolean {
  return new RegExp(`\\b${value}\\b`).test(text);
}

/** " 3 to 200 characters." for the bounds the description does not already state. */
function lengthNote(description: string, min: number | undefined, max: number | undefined): string {
  const lower = min !== undefined && min > 1 && !mentions(description, min) ? min : undefined;
  const upper = max !== undefined && !mentions(description, max) ? max : undefined;
  if (lower !== undefined && upper !== undefined) return ` ${lower} to ${upper} characters.`;
  if (lower !== undefined) return ` At least ${lower} characters.`;
  if (upper !== undefined) return ` At most ${upper} characters.`;
  return "";
}

/** Makes one property schema also accept null: how strict mode spells "optional". */
function nullable(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...schema.anyOf, { type: "null" }] };
  const out: JsonSchema = { ...schema };
  if (typeof schema.type === "string") out.type = [schema.type, "null"];
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  return out;
}

/**
 * Rewrites a strict 2020-12 input schema into OpenAI's strict subset: every property required,
 * optional ones nullable, length bounds moved into the description, no `$schema`.
 */
export function toOpenAiStrictSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [keyword, value] of Object.entries(withoutDialect(schema))) {
    if ((LENGTH_KEYWORDS as readonly string[]).includes(keyword)) continue;
    if (keyword === "required") continue;
    if (keyword === "properties" && typeof value === "object" && value !== null) {
      const required = new Set(Array.isArray(schema.required) ? schema.required : []);
      const properties: Record<string, JsonSchema> = {};
      for (const [name, property] of Object.entries(value as Record<string, JsonSchema>)) {
        const strict = toOpenAiStrictSchema(property);
        properties[name] = required.has(name) ? strict : nullable(strict);
      }
      out.properties = properties;
      out.required = Object.keys(properties);
    } else if (keyword === "items" && typeof value === "object" && value !== null) {
      out.items = toOpenAiStrictSchema(value as JsonSchema);
    } else if (keyword === "anyOf" && Array.isArray(value)) {
      out.anyOf = value.map((branch) => toOpenAiStrictSchema(branch as JsonSchema));
    } else {
      out[keyword] = value;
    }
  }
  const min = typeof schema.minLength === "number" ? schema.minLength : undefined;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : undefined;
  if (typeof out.description === "string") out.description += lengthNote(out.description, min, max);
  return out;
}

/**
 * The tool as an OpenAI function with `strict: true`: the model's arguments are constrained to
 * the schema, so a strict-mode call can only fail the proxy's business rules, not its structure.
 *
 * @example
 * await openai.chat.completions.create({ model, messages, tools: tools.map(toOpenAiTool) });
 */
export function toOpenAiTool(tool: ToolSpec): OpenAiTool {
  return {
    type: "function",
    function: {
      name: tool.name,
      description: modelDescription(tool),
      parameters: toOpenAiStrictSchema(inputJsonSchema(tool)),
      strict: true,
    },
  };
}

/**
 * The same strict function for the Responses API, which takes the function's fields flat.
 *
 * @example
 * await openai.responses.create({ model, input, tools: tools.map(toOpenAiResponsesTool) });
 */
export function toOpenAiResponsesTool(tool: ToolSpec): OpenAiResponsesTool {
  const { function: fn } = toOpenAiTool(tool);
  return { type: "function", ...fn };
}
