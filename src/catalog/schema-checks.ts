import * as z from "zod";
import { ARGUMENTS_LEVEL, INPUT_LIMITS } from "../core/input-limits";
import { RESERVED_KEYS } from "../core/reserved-keys";
import type { ToolSpec } from "./define-tool";
import { unwrap } from "./schema-fields";

/**
 * The catalog's rules on a tool's two schemas: an input every agent can fill and the edge lets
 * through, and an output whose free text is classified as trusted or fenced.
 */

/** Tells one broken rule: the definition's field at fault and the sentence a CatalogError carries. */
export type Report = (field: string, message: string) => void;

function describedAs(schema: z.ZodType): string | undefined {
  return schema.description ?? unwrap(schema).description;
}

function isStrictObject(schema: z.ZodObject<z.ZodRawShape>): boolean {
  const catchall = schema._zod.def.catchall;
  return catchall !== undefined && catchall._zod.def.type === "never";
}

/**
 * Every object in the input, at any depth, must be strict and every field described, and nothing in
 * it may need what the edge refuses in every body (core/input-limits.ts): such a field could never
 * be sent. `level` is the schema's own nesting, the arguments being 0.
 */
function checkInputSchema(tool: string, schema: z.ZodType, path: string, report: Report, level = 0): void {
  const inner = unwrap(schema);
  const named = path === "" ? "its input schema" : `"${path}"`;
  if (inner instanceof z.ZodString && (inner.minLength ?? 0) > INPUT_LIMITS.string_chars) {
    report(
      "input",
      `tool "${tool}": field ${named} needs at least ${inner.minLength} characters; the edge refuses strings over ${INPUT_LIMITS.string_chars}, so it could never be sent`,
    );
  }
  if (!(inner instanceof z.ZodArray || inner instanceof z.ZodObject)) return;
  if (ARGUMENTS_LEVEL + level > INPUT_LIMITS.depth) {
    report(
      "input",
      `tool "${tool}": field ${named} nests ${level} levels into the arguments; a call carries at most ${INPUT_LIMITS.depth - ARGUMENTS_LEVEL} (bodies nest at most ${INPUT_LIMITS.depth} levels), so it could never be sent`,
    );
    return;
  }
  if (inner instanceof z.ZodArray) {
    const least = minItems(inner);
    if (least > INPUT_LIMITS.array_items) {
      report(
        "input",
        `tool "${tool}": field ${named} needs at least ${least} items; the edge refuses arrays over ${INPUT_LIMITS.array_items}, so it could never be sent`,
      );
    }
    checkInputSchema(tool, inner.element as z.ZodType, `${path}[]`, report, level + 1);
    return;
  }
  const where = path === "" ? "its input schema" : `the object at "${path}"`;
  if (!isStrictObject(inner)) {
    report(
      "input",
      `tool "${tool}": ${where} is not strict; use z.strictObject(...) or .strict() so unknown fields are refused`,
    );
  }
  // An optional or defaulted field may be left out (zod marks it `optin`); the rest must be sent.
  const required = Object.values(inner.shape).filter(
    (field) => (field as z.ZodType)._zod.optin === undefined,
  ).length;
  if (required > INPUT_LIMITS.object_keys) {
    report(
      "input",
      `tool "${tool}": ${where} requires ${required} fields; the edge refuses objects of more than ${INPUT_LIMITS.object_keys}, so it could never be sent`,
    );
  }
  for (const [field, fieldSchema] of Object.entries(inner.shape)) {
    const fieldPath = path === "" ? field : `${path}.${field}`;
    if (RESERVED_KEYS.has(field)) {
      report(
        "input",
        `tool "${tool}": field "${fieldPath}" has a reserved name; every call's arguments are refused holding it, so rename it`,
      );
    }
    if (field.length > INPUT_LIMITS.key_chars) {
      report(
        "input",
        `tool "${tool}": field "${fieldPath}" has a name of ${field.length} characters; the edge refuses names over ${INPUT_LIMITS.key_chars}, so rename it`,
      );
    }
    const description = describedAs(fieldSchema as z.ZodType);
    if (!description || description.trim().length === 0) {
      report(
        "input",
        `tool "${tool}": field "${fieldPath}" has no description; a model fills fields from their descriptions`,
      );
    }
    checkInputSchema(tool, fieldSchema as z.ZodType, fieldPath, report, level + 1);
  }
}

/** The fewest items an array schema accepts (its `.min(n)` or `.length(n)`). */
function minItems(schema: z.ZodArray): number {
  const checks = (schema._zod.def.checks ?? []) as {
    _zod: { def: { check?: string; minimum?: number; length?: number } };
  }[];
  let least = 0;
  for (const { _zod } of checks) {
    if (_zod.def.check === "min_length") least = Math.max(least, _zod.def.minimum ?? 0);
    if (_zod.def.check === "length_equals") least = Math.max(least, _zod.def.length ?? 0);
  }
  return least;
}

/** Whether a string schema is pinned to a pattern: a `.regex(...)` or a format such as `z.iso.datetime()`. */
function hasPattern(schema: z.ZodString): boolean {
  const def = schema._zod.def as { format?: string; checks?: { _zod: { def: { check?: string } } }[] };
  if (def.format !== undefined) return true;
  return (def.checks ?? []).some((check) => check._zod.def.check === "string_format");
}

/**
 * The output schema's string leaves, by path (`recent_messages[].body`), each flagged as free text
 * (no regex, no format) or not. Enums and literals are not strings here. A union's alternatives
 * (an answer that is an object or a list of them) each hold theirs, under the same path.
 */
function stringLeaves(schema: z.ZodType, path = ""): { path: string; free: boolean }[] {
  const inner = unwrap(schema);
  if (inner instanceof z.ZodString) return [{ path, free: !hasPattern(inner) }];
  if (inner instanceof z.ZodUnion) {
    return (inner.options as z.ZodType[]).flatMap((option) => stringLeaves(option, path));
  }
  if (inner instanceof z.ZodArray) return stringLeaves(inner.element as z.ZodType, `${path}[]`);
  if (inner instanceof z.ZodObject) {
    return Object.entries(inner.shape).flatMap(([field, child]) =>
      stringLeaves(child as z.ZodType, path === "" ? field : `${path}.${field}`),
    );
  }
  return [];
}

function covers(prefix: string, path: string): boolean {
  return path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[]`);
}

/**
 * Every free-text output field is classified: `untrusted`, `trusted_text` with a reason, or masked
 * by `sensitive`. Declared paths must name string fields, so a typo cannot leave a field unfenced.
 */
function checkOutputTrust(tool: string, spec: ToolSpec, report: Report): void {
  const leaves = stringLeaves(spec.output);
  const known = new Set(leaves.map((leaf) => leaf.path));
  const untrusted = spec.untrusted ?? [];
  const trusted = spec.trusted_text ?? {};
  for (const path of [...untrusted, ...Object.keys(trusted)]) {
    if (!known.has(path)) {
      report(
        "output",
        `tool "${tool}": "${path}" is declared untrusted or trusted_text but is not a string field of the output schema`,
      );
    }
  }
  for (const [path, reason] of Object.entries(trusted)) {
    if (typeof reason !== "string" || reason.trim().length === 0) {
      report("output.trusted_text", `tool "${tool}": trusted_text "${path}" needs a reason`);
    }
    if (untrusted.includes(path)) {
      report("output", `tool "${tool}": "${path}" is declared both untrusted and trusted_text`);
    }
  }
  const masked = Object.keys(spec.sensitive ?? {});
  for (const leaf of leaves) {
    if (!leaf.free) continue;
    if (untrusted.includes(leaf.path) || leaf.path in trusted) continue;
    if (masked.some((prefix) => covers(prefix, leaf.path))) continue;
    report(
      "output",
      `tool "${tool}": output field "${leaf.path || "(the result)"}" is free text but not classified; list it in untrusted (third-party text, fenced) or in trusted_text with the reason it cannot carry outside text`,
    );
  }
}

/** The input is a strict, described zod object; the output a zod schema whose free text is classified. */
export function checkSchemas(name: string, spec: ToolSpec, report: Report): void {
  if (spec.input instanceof z.ZodObject) {
    checkInputSchema(name, spec.input, "", report);
  } else {
    report("input", `tool "${name}": input must be a zod object schema`);
  }
  if (spec.output instanceof z.ZodType) {
    checkOutputTrust(name, spec, report);
  } else {
    report(
      "output",
      `tool "${name}": output must be a zod schema; it is the whitelist of what the model sees`,
    );
  }
}
