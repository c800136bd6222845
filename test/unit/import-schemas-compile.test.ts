import fc from "fast-check";
import { describe, expect, it } from "vitest";
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
