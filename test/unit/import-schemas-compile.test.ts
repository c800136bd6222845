import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { toCatalogSchema } from "../../scripts/tools/openapi-schema.mjs";
import { type SchemaDirection, schemaSource } from "../../scripts/tools/zod-source";
import { propertyPlans } from "../property-plan";

/**
 * The importers (OpenAPI and MCP share the conversion) never draft a schema the catalog's compiler
 * refuses: for any schema an OpenAPI document or an MCP server may hold, the conversion either
 * reports why it cannot be expressed (and drafts nothing), or drafts one that compiles. A draft
 * `check` would only refuse for its schemas leaves a platform team a declaration they cannot fix
 * from the problems the importer printed.
 */

const plan = propertyPlans(process.env);

type Schema = Record<string, unknown>;
const FIELDS = ["a", "b", "c"];
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const scalar = fc.constantFrom<unknown>("x", 1, 2.5, true, null);
const literalish = fc.oneof(scalar, fc.constant({ k: 1 }), fc.constant([1]));

const leaves = fc.oneof(
  fc.record(
    {
      type: fc.constantFrom<unknown>(
        "string",
        "integer",
        "number",
        "boolean",
        "null",
        ["string", "null"],
        "date",
      ),
      format: optional(fc.constantFrom("email", "date-time", "uuid", "byte", "int64")),
      pattern: optional(fc.constantFrom("^a", "^\\p{L}+$", "^[a-z\\_]+$", "(")),
      minimum: optional(fc.integer({ min: -2, max: 2 })),
      exclusiveMinimum: optional(fc.oneof(fc.boolean(), fc.integer({ min: -2, max: 2 }))),
      nullable: optional(fc.boolean()),
      readOnly: optional(fc.boolean()),
      writeOnly: optional(fc.boolean()),
      default: optional(scalar),
      example: optional(scalar),
    },
    { requiredKeys: ["type"] },
  ),
  fc.record({ enum: fc.array(literalish, { minLength: 1, maxLength: 3 }), nullable: optional(fc.boolean()) }),
  fc.record({ const: literalish }),
  fc.constantFrom<Schema>(
    {},
    { oneOf: [{ type: "string" }, { type: "integer" }] },
    { not: { type: "string" } },
  ),
);

const schemas = fc.letrec<{ schema: Schema }>((tie) => ({
  schema: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaves,
    fc.record(
      {
        type: optional(fc.constant("object")),
        properties: fc.dictionary(fc.constantFrom(...FIELDS), tie("schema"), { maxKeys: 3 }),
        required: optional(fc.subarray([...FIELDS, "d"])),
        additionalProperties: optional(fc.oneof(fc.boolean(), tie("schema"))),
        readOnly: optional(fc.boolean()),
      },
      { requiredKeys: ["properties"] },
    ),
    fc.record({ allOf: fc.array(tie("schema"), { minLength: 1, maxLength: 2 }) }),
    // An answer's alternatives: variants of one type or several, nullable, with a discriminator.
    fc.record(
      {
        oneOf: fc.array(tie("schema"), { minLength: 1, maxLength: 3 }),
        nullable: optional(fc.boolean()),
        discriminator: optional(fc.constant({ propertyName: "kind", mapping: { x: "#/x" } })),
        properties: optional(fc.dictionary(fc.constantFrom(...FIELDS), tie("schema"), { maxKeys: 2 })),
      },
      { requiredKeys: ["oneOf"] },
    ),
    fc.record({ anyOf: fc.array(tie("schema"), { minLength: 1, maxLength: 3 }) }),
    fc.record(
      {
        type: fc.constant(["object", "null"]),
        properties: fc.dictionary(fc.constantFrom(...FIELDS), tie("schema"), { maxKeys: 2 }),
      },
      { requiredKeys: ["type"] },
    ),
    fc.record(
      {
        type: optional(fc.constant("array")),
        items: optional(tie("schema")),
        uniqueItems: optional(fc.boolean()),
        minItems: optional(fc.integer({ min: 0, max: 2 })),
      },
      { requiredKeys: [] },
    ),
  ),
})).schema;

describe("schemas the importers convert", () => {
  it.each<SchemaDirection>(["input", "output"])("%s: compile, or are reported and left out", (direction) => {
    fc.assert(
      fc.property(schemas, (schema) => {
        const reports: string[] = [];
        const drafted = toCatalogSchema(schema, direction, "schema", (where, message) => {
          reports.push(`${where}: ${message}`);
        });
        if (drafted === null) {
          expect(reports.length, "nothing drafted and nothing said").toBeGreaterThan(0);
          return;
        }
        expect(() => schemaSource(drafted, direction, "schema"), JSON.stringify(drafted)).not.toThrow();
      }),
      plan({ seed: 20_261_206, numRuns: 1500 }),
    );
  });
});

describe("an answer's alternatives", () => {
  const compiled = (schema: Schema) =>
    new Function("z", `return ${schemaSource(schema, "output", "output.schema")};`)(z) as z.ZodType;
  const drafted = (schema: Schema) => {
    const reports: string[] = [];
    const out = toCatalogSchema(schema, "output", "schema", (where, message) =>
      reports.push(`${where}: ${message}`),
    );
    expect(reports).toEqual([]);
    return out as Schema;
  };

  it("merges variants of one type into one object whose fields are every variant's, required where all require them", () => {
    const schema = drafted({
      oneOf: [
        {
          type: "object",
          required: ["kind", "card"],
          properties: { kind: { enum: ["card"] }, card: { type: "string", pattern: "^\\d{4}$" } },
        },
        {
          type: "object",
          required: ["kind", "iban"],
          properties: { kind: { enum: ["bank"] }, iban: { type: "string", format: "iban" } },
        },
      ],
      discriminator: { propertyName: "kind" },
    });
    expect(schema).toEqual({
      type: "object",
      properties: {
        kind: { type: "string", enum: ["card", "bank"] },
        card: { type: "string", pattern: "^\\d{4}$" },
        iban: { type: "string", format: "iban" },
      },
      required: ["kind"],
    });
    const bank = { kind: "bank", iban: "GB33BUKB20201555555555" };
    expect(compiled(schema).parse(bank)).toEqual(bank);
  });

  it("keeps variants of several types apart, nullable ones too, and the union takes each value whole", () => {
    const item = { type: "object", properties: { id: { type: "string", format: "uuid" } } };
    const schema = drafted({ anyOf: [item, { type: "array", items: item }], nullable: true });
    expect(schema).toEqual({ anyOf: [item, { type: "array", items: item }, { type: "null" }] });
    const one = { id: "9b2f6f7e-6f0b-4b8e-8d36-0d6f5f3b1c11" };
    const parse = compiled(schema).parse;
    expect(parse(one)).toEqual(one);
    expect(parse([one, one])).toEqual([one, one]);
    expect(parse(null)).toBeNull();
  });

  it("carries a nullable object in 3.0's form and in 3.1's", () => {
    const fields = { properties: { id: { type: "string", format: "uuid" } } };
    for (const schema of [
      { type: "object", nullable: true, ...fields },
      { type: ["object", "null"], ...fields },
    ]) {
      expect(drafted(schema)).toEqual({ type: ["object", "null"], ...fields });
      expect(compiled(drafted(schema)).parse(null)).toBeNull();
    }
  });

  it("is refused, at the alternative, where a union could strip a variant's fields or an input would hold one", () => {
    const objects = {
      anyOf: [
        { type: "object", properties: { a: { type: "string" } } },
        { type: "object", properties: { b: { type: "string" } } },
      ],
    };
    expect(() => schemaSource(objects, "output", "output.schema")).toThrow(
      "anyOf[0] is of type object too: a whitelist would keep only the fields of the first a value fits",
    );
    expect(() => schemaSource({ oneOf: [{ type: "string" }] }, "input", "input")).toThrow(
      "oneOf is not supported in a declaration",
    );
    expect(() =>
      schemaSource({ type: "object", anyOf: [{ type: "string" }] }, "output", "output.schema"),
    ).toThrow("type beside anyOf is not supported");
    expect(() => schemaSource({ anyOf: [{ enum: ["a"] }] }, "output", "output.schema")).toThrow(
      "each alternative names its JSON type",
    );
  });
});
