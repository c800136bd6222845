import Ajv2020 from "ajv/dist/2020";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type * as z from "zod";
import { evaluateSchema } from "../../scripts/tools/catalog-module";
import { type SchemaDirection, SchemaError, schemaSource } from "../../scripts/tools/zod-source";
import { propertyPlans } from "../property-plan";

/**
 * A declared tool's schemas are JSON Schema, written by a platform team or imported from an OpenAPI
 * document or an MCP server, and compiled to zod (scripts/tools/zod-source.ts). The proxy must accept
 * exactly the arguments and results the JSON Schema accepts, as the upstream's own validator reads
 * it: Ajv, the JSON Schema 2020-12 validator most upstreams use, is the reference. The differences are
 * the design's: an input refuses fields its properties do not declare, at every depth (Ajv is given
 * `additionalProperties: false` there); an output keeps only its declared fields and may repeat an
 * item (Ajv is given no `additionalProperties` limit and no `uniqueItems` there); an integer is a
 * safe one (none of the values below is past 2^53).
 */

const plan = propertyPlans(process.env);

type JsonSchema = Record<string, unknown>;

const FIELDS = ["a", "b", "c"];
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

const strings: fc.Arbitrary<JsonSchema> = fc.record(
  {
    type: fc.constantFrom<unknown>("string", ["string", "null"]),
    minLength: optional(fc.integer({ min: 0, max: 3 })),
    maxLength: optional(fc.integer({ min: 0, max: 4 })),
    pattern: optional(fc.constantFrom("^a", "^.$", "^\\p{L}+$", "^[a-z]*$", "\\d", "^\\w{2}$")),
  },
  { requiredKeys: ["type"] },
);
// Whole or binary-fraction steps: with a step like 0.1, Ajv divides in floating point and refuses
// 0.3, which JSON Schema (and zod) count as a multiple.
const numbers: fc.Arbitrary<JsonSchema> = fc.record(
  {
    type: fc.constantFrom("number", "integer"),
    minimum: optional(fc.integer({ min: -3, max: 3 })),
    maximum: optional(fc.integer({ min: -3, max: 5 })),
    exclusiveMinimum: optional(fc.integer({ min: -3, max: 3 })),
    exclusiveMaximum: optional(fc.integer({ min: -2, max: 5 })),
    multipleOf: optional(fc.constantFrom(0.5, 2, 3)),
  },
  { requiredKeys: ["type"] },
);
const scalars = fc.oneof(
  fc.constantFrom("a", "b", "", "ab", "abc", "é", "😀", "😀😀", "1"),
  fc.constantFrom(-2, -1, 0, 1, 2, 1.5, 3, 4.5, 6),
  fc.boolean(),
  fc.constant(null),
);

const schemas = fc.letrec<{ schema: JsonSchema }>((tie) => ({
  schema: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    strings,
    numbers,
    fc.constantFrom({ type: "boolean" }, { type: "null" }, {}),
    fc.record({ enum: fc.array(scalars, { minLength: 1, maxLength: 3 }) }),
    fc.record({ const: scalars }),
    fc
      .record(
        {
          type: fc.constant("object"),
          properties: fc.dictionary(fc.constantFrom(...FIELDS), tie("schema"), { maxKeys: 3 }),
          required: fc.subarray(FIELDS),
          additionalProperties: optional(fc.boolean()),
        },
        { requiredKeys: ["type", "properties", "required"] },
      )
      // Required fields among the declared ones: the other kind is refused (a case below).
      .map((schema) => ({
        ...schema,
        required: schema.required.filter((field) => field in schema.properties),
      })),
    fc.record(
      {
        type: fc.constant("array"),
        items: tie("schema"),
        minItems: optional(fc.integer({ min: 0, max: 2 })),
        maxItems: optional(fc.integer({ min: 0, max: 3 })),
        uniqueItems: optional(fc.boolean()),
      },
      { requiredKeys: ["type", "items"] },
    ),
  ),
})).schema;

/** JSON values as a call's body parses them (fast-check may build an object without a prototype). */
const values = fc
  .letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      scalars,
      fc.array(tie("value"), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom(...FIELDS), tie("value"), { maxKeys: 3 }),
      // Equal items in another key order: not unique, as JSON Schema compares them.
      fc.constant([
        { a: 1, b: "x" },
        { b: "x", a: 1 },
      ]),
    ),
  }))
  .value.map((value) => JSON.parse(JSON.stringify(value)) as unknown);

/** The JSON Schema as the design reads it in `direction`, for Ajv. */
function asDesigned(schema: unknown, direction: SchemaDirection): unknown {
  if (typeof schema !== "object" || schema === null) return schema;
  const { additionalProperties: _declared, ...rest } = schema as JsonSchema;
  const out: JsonSchema = rest;
  if (rest.type === "object") {
    if (direction === "input") out.additionalProperties = false;
    out.properties = Object.fromEntries(
      Object.entries(rest.properties as JsonSchema).map(([field, child]) => [
        field,
        asDesigned(child, direction),
      ]),
    );
  }
  if (rest.items !== undefined) out.items = asDesigned(rest.items, direction);
  if (direction === "output") delete out.uniqueItems;
  return out;
}

/** What the catalog compiles a schema to, at any depth (a tool's input root must be an object; not so here). */
function compiled(schema: JsonSchema, direction: SchemaDirection): z.ZodType {
  return evaluateSchema(schemaSource(schema, direction, direction)) as z.ZodType;
}

const ajv = new Ajv2020({ strict: false });

describe("declared schemas against JSON Schema", () => {
  it.each<SchemaDirection>(["input", "output"])("%s: accepts exactly the values Ajv accepts", (direction) => {
    fc.assert(
      fc.property(schemas, fc.array(values, { minLength: 1, maxLength: 6 }), (schema, samples) => {
        const zod = compiled(schema, direction);
        const reference = ajv.compile(asDesigned(schema, direction) as object);
        for (const value of samples) {
          expect(zod.safeParse(value).success, JSON.stringify(value)).toBe(reference(value));
        }
      }),
      plan({ seed: 20_261_204, numRuns: 400 }),
    );
  });

  it("reads a pattern over characters, as JSON Schema does: a letter class, one emoji as one character", () => {
    const letters = compiled({ type: "string", pattern: "^\\p{L}+$" }, "input");
    expect(letters.safeParse("Zoë").success).toBe(true);
    expect(letters.safeParse("p{L}").success).toBe(false);
    expect(compiled({ type: "string", pattern: "^.$" }, "input").safeParse("😀").success).toBe(true);
    // A pattern only the older grammar reads (an escaped underscore) still compiles, read so.
    expect(compiled({ type: "string", pattern: "^[a-z\\_]+$" }, "input").safeParse("a_b").success).toBe(true);
  });

  it("counts an input's items equal whatever their key order when they must be unique; an output's may repeat", () => {
    const items = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } };
    const schema = { type: "array", items, uniqueItems: true };
    const unique = compiled(schema, "input");
    expect(
      unique.safeParse([
        { a: 1, b: 2 },
        { b: 2, a: 1.0 },
      ]).success,
    ).toBe(false);
    expect(unique.safeParse([{ a: 1 }, { a: 2 }]).success).toBe(true);
    // The upstream's items differ in a field the output does not keep: the answer is not withheld.
    const output = compiled(
      { ...schema, items: { type: "object", properties: { a: { type: "number" } } } },
      "output",
    );
    expect(
      output.safeParse([
        { a: 1, note: "x" },
        { a: 1, note: "y" },
      ]).success,
    ).toBe(true);
  });

  it("refuses a pattern that is no regular expression, at its location", () => {
    expect(() => schemaSource({ type: "string", pattern: "(" }, "input", "input.properties.code")).toThrow(
      new SchemaError("input.properties.code.pattern", '"(" is not a regular expression'),
    );
  });

  it("refuses an object or a list as an allowed value, which a literal cannot compare", () => {
    expect(() => schemaSource({ enum: ["a", [1]] }, "input", "input.properties.kind")).toThrow(
      new SchemaError(
        "input.properties.kind.enum[1]",
        "[1] cannot be an allowed value: enum and const values are strings, numbers, booleans or null",
      ),
    );
    expect(() => schemaSource({ const: { a: 1 } }, "output", "output.schema")).toThrow(
      /cannot be an allowed value/,
    );
  });

  it("refuses an input field required but not declared, which no call could send", () => {
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a", "b"] };
    expect(() => schemaSource(schema, "input", "input")).toThrow(
      new SchemaError(
        "input.required",
        '"b" required but not among the properties, so no call could send it',
      ),
    );
    // A name every object inherits is not a declared property.
    expect(() => schemaSource({ ...schema, required: ["a", "toString"] }, "input", "input")).toThrow(
      /"toString" required but not among the properties/,
    );
    // An output keeps only its declared fields, so the undeclared one is simply not kept.
    expect(compiled(schema, "output").safeParse({ a: "x" }).success).toBe(true);
  });
});
