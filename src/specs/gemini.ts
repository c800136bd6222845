import type { ToolSpec } from "../catalog/define-tool";
import { modelDescription } from "./description";
import { inputJsonSchema, type JsonSchema } from "./json-schema";

/**
 * A Gemini `FunctionDeclaration`, for `tools: [{ functionDeclarations: [...] }]`. Its `parameters`
 * is Gemini's `Schema`: a subset of the OpenAPI 3.0 schema object, where a keyword it does not
 * know fails the whole request ("Invalid JSON payload received. Unknown name ...").
 */
export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** The `format` values the Gemini API accepts, per type; any other is told in the description. */
const GEMINI_FORMATS: Readonly<Record<string, readonly string[]>> = {
  string: ["enum", "date-time"],
  number: ["float", "double"],
  integer: ["int32", "int64"],
};

/** Keywords copied as they are: Gemini's `Schema` fields with the same meaning as in JSON Schema. */
const KEPT = [
  "description",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "minProperties",
  "maxProperties",
] as const;

const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const isNullSchema = (value: unknown): boolean => isSchema(value) && value.type === "null";

/** Appends a sentence to the description, creating it if there is none. */
function note(out: JsonSchema, sentence: string): void {
  out.description = typeof out.description === "string" ? `${out.description} ${sentence}` : sentence;
}

const literal = (value: unknown) => JSON.stringify(value);

/**
 * Splits a JSON Schema `type` into Gemini's one type and `nullable`: `["string", "null"]` is a
 * nullable string; several non-null types become an `anyOf` of one type each.
 */
function typeOf(type: unknown): { type?: string; nullable: boolean; anyOf?: JsonSchema[] } {
  const types = (Array.isArray(type) ? type : [type]).filter((t): t is string => typeof t === "string");
  const nullable = types.includes("null");
  const rest = types.filter((t) => t !== "null");
  if (rest.length === 1) return { type: rest[0], nullable };
  if (rest.length > 1) return { nullable, anyOf: rest.map((t) => ({ type: t })) };
  return { nullable };
}

/**
 * Rewrites one JSON Schema node into the Gemini subset: one `type` plus `nullable: true` instead
 * of type lists and `null` branches, `enum` only on strings, `format` only where Gemini accepts
 * it, no `$schema` or `additionalProperties`. What the subset cannot state (a non-string enum or
 * `const`, an exclusive bound, a default, another format) is told to the model in the
 * description; the proxy enforces the full schema when it validates the call either way.
 */
export function toGeminiSchema(schema: JsonSchema): JsonSchema {
  // A nullable branch (`anyOf: [X, {type: "null"}]`, zod's `.nullable()`) is X with nullable.
  const branches = Array.isArray(schema.anyOf)
    ? schema.anyOf
    : Array.isArray(schema.oneOf)
      ? schema.oneOf
      : [];
  const nonNull = branches.filter((branch) => !isNullSchema(branch));
  const nullBranch = nonNull.length < branches.length;
  const { anyOf: _anyOf, oneOf: _oneOf, ...own } = schema;
  if (branches.length > 0 && nonNull.length === 1 && isSchema(nonNull[0])) {
    const merged = toGeminiSchema({ ...nonNull[0], ...own });
    return nullBranch ? { ...merged, nullable: true } : merged;
  }

  const out: JsonSchema = {};
  const typed = typeOf(schema.type);
  if (typed.type !== undefined) out.type = typed.type;
  let nullable = typed.nullable || nullBranch;
  if (typed.anyOf) out.anyOf = typed.anyOf;
  if (nonNull.length > 1) out.anyOf = nonNull.filter(isSchema).map(toGeminiSchema);

  for (const keyword of KEPT) {
    if (schema[keyword] !== undefined) out[keyword] = schema[keyword];
  }

  const enumValues = Array.isArray(schema.enum)
    ? schema.enum
    : schema.const !== undefined
      ? [schema.const]
      : undefined;
  if (enumValues) {
    if (enumValues.includes(null)) nullable = true;
    const values = enumValues.filter((value) => value !== null);
    if (values.length > 0 && values.every((value) => typeof value === "string")) {
      out.type ??= "string";
      out.enum = values;
    } else if (values.length === 1) {
      note(out, `Must be ${literal(values[0])}.`);
    } else if (values.length > 1) {
      note(out, `One of ${values.map(literal).join(", ")}.`);
    }
  }

  if (typeof schema.format === "string") {
    const allowed = typeof out.type === "string" ? (GEMINI_FORMATS[out.type] ?? []) : [];
    if (allowed.includes(schema.format)) out.format = schema.format;
    else note(out, `Format: ${schema.format}.`);
  }
  if (schema.exclusiveMinimum !== undefined) note(out, `Greater than ${literal(schema.exclusiveMinimum)}.`);
  if (schema.exclusiveMaximum !== undefined) note(out, `Less than ${literal(schema.exclusiveMaximum)}.`);
  if (schema.default !== undefined) note(out, `Defaults to ${literal(schema.default)}.`);

  if (isSchema(schema.properties)) {
    const properties: Record<string, JsonSchema> = {};
    for (const [name, property] of Object.entries(schema.properties)) {
      if (isSchema(property)) properties[name] = toGeminiSchema(property);
    }
    out.properties = properties;
    const required = Array.isArray(schema.required)
      ? schema.required.filter((name) => name in properties)
      : [];
    if (required.length > 0) out.required = required;
  }
  if (isSchema(schema.items)) out.items = toGeminiSchema(schema.items);
  if (nullable) out.nullable = true;
  return out;
}

/**
 * The tool as a Gemini function declaration. Gemini cannot close an object
 * (`additionalProperties` is refused), so an unknown field is refused by the proxy's validation
 * instead, with a `validation_error` that names it.
 *
 * @example
 * await ai.models.generateContent({ model, contents, config: { tools: [{ functionDeclarations: tools }] } });
 */
export function toGeminiFunctionDeclaration(tool: ToolSpec): GeminiFunctionDeclaration {
  return {
    name: tool.name,
    description: modelDescription(tool),
    parameters: toGeminiSchema(inputJsonSchema(tool)),
  };
}
