import * as z from "zod";
import type { ToolSpec } from "../catalog/define-tool";
import { envelopeSchema } from "../wire/envelope";

/** A JSON Schema document as plain JSON: what every spec format is built from. */
export type JsonSchema = { [keyword: string]: unknown };
/** A schema whose root is an object, as tool arguments and MCP output schemas must be. */
export type ObjectJsonSchema = JsonSchema & { type: "object" };

/**
 * zod writes `z.number().int()` as an integer bounded by ±2^53-1. Those bounds say nothing a
 * model or client needs and cost tokens in every spec, so they are dropped.
 */
function dropSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(dropSafeIntegerBounds);
  if (typeof node !== "object" || node === null) return node;
  const out: JsonSchema = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword === "minimum" && value === Number.MIN_SAFE_INTEGER) continue;
    if (keyword === "maximum" && value === Number.MAX_SAFE_INTEGER) continue;
    out[keyword] = dropSafeIntegerBounds(value);
  }
  return out;
}

function toJsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  return dropSafeIntegerBounds(z.toJSONSchema(schema, { io, target: "draft-2020-12" })) as JsonSchema;
}

/**
 * The arguments a model fills, in input mode: defaults are optional, unknown fields are refused
 * (`additionalProperties: false`, because every catalog input is a strict object).
 */
export function inputJsonSchema(tool: Pick<ToolSpec, "input">): ObjectJsonSchema {
  // The catalog only admits z.object inputs, whose JSON Schema root is always an object.
  return toJsonSchema(tool.input, "input") as ObjectJsonSchema;
}

/**
 * The envelope a call of this tool answers with, its `data` narrowed to the tool's output whitelist.
 * It is what MCP `structuredContent` carries, so it is the tool's MCP `outputSchema`.
 */
export function envelopeJsonSchema(tool: Pick<ToolSpec, "output" | "deprecated">): ObjectJsonSchema {
  // Built from the envelope's own shape so a field added to the envelope appears here too. Only a
  // deprecated tool answers with a `deprecation` notice, so only its schema names one: a namespace
  // of hundreds of tools exported at once does not repeat the notice's schema for every tool.
  const { deprecation, ...shape } = envelopeSchema().shape;
  const envelope = z.strictObject({
    ...shape,
    ...(tool.deprecated ? { deprecation } : {}),
    data: tool.output.nullable(),
  });
  return toJsonSchema(envelope, "output") as ObjectJsonSchema;
}

/** The same schema without `$schema`, for APIs that take a bare schema (OpenAI, Anthropic, OpenAPI). */
export function withoutDialect<S extends JsonSchema>(schema: S): Omit<S, "$schema"> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/**
 * Every object in a schema that would accept fields it does not name, as JSON Pointer-like paths.
 * An object node is loose unless it says `additionalProperties: false`; a map (`additionalProperties`
 * as a schema, no `properties`) is loose too unless `allowMaps` is set, because a model filling
 * arguments must never be invited to invent keys.
 *
 * @example
 * looseObjects(inputJsonSchema(issueRefund)); // [] for a strict catalog
 */
export function looseObjects(schema: unknown, opts: { allowMaps?: boolean } = {}, path = ""): string[] {
  if (Array.isArray(schema))
    return schema.flatMap((item, index) => looseObjects(item, opts, `${path}/${index}`));
  if (typeof schema !== "object" || schema === null) return [];
  const node = schema as JsonSchema;
  const found: string[] = [];
  const isObject = node.type === "object" || (Array.isArray(node.type) && node.type.includes("object"));
  if (isObject && node.additionalProperties !== false) {
    const isMap = node.properties === undefined && typeof node.additionalProperties === "object";
    if (!(isMap && opts.allowMaps)) found.push(path === "" ? "/" : path);
  }
  for (const [keyword, value] of Object.entries(node)) {
    found.push(...looseObjects(value, opts, `${path}/${keyword}`));
  }
  return found;
}
