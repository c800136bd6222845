import { Ajv, addFormats } from "@modelcontextprotocol/server/validators/ajv";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { omitNullOptionals, validateArguments } from "../../src/machine/validate";
import { inputJsonSchema, withoutDialect } from "../../src/specs/json-schema";
import { catalog } from "../../src/tools";
import { propertyPlans } from "../property-plan";
import { type SpecSchema, typeOf } from "./support/spec-schema";

/**
 * What a model is told a tool takes (the JSON Schema every spec format is built from) and what the
 * proxy accepts are the same: for every tool of the catalog, on arguments generated from the schema
 * itself (valid ones and near misses), Ajv on the spec and the proxy's validation agree. The
 * differences are the design's: `null` for an optional field means absent (OpenAI's strict mode
 * sends it so), which the proxy accepts and a plain JSON Schema does not, so Ajv sees such a field
 * left out; and a field filling the upstream's path refuses `.` and `..` (pathValueProblem), which
 * no spec states, so no generated text is made of dots alone.
 */

const plan = propertyPlans(process.env);

/** Values of a format: ones both validators must accept, and ones both must refuse. */
const FORMAT_VALUES: Record<string, string[]> = {
  "date-time": ["2026-07-01T12:00:00Z", "2026-07-01T12:00:00+02:00", "2026-07-01", "yesterday"],
  email: ["someone@example.com", "nobody"],
  uri: ["https://example.com/a?b=c", "not a uri"],
};
const NOISE = fc.constantFrom<unknown>(null, 0, -1, 1.5, "", "x", "😀", true, [], {});
const CHARACTERS = fc.constantFrom("a", "Z", "1", " ", "-", "é", "😀", "\n");

/** Arguments for `schema`: mostly valid, each part sometimes just outside a bound, sometimes noise. */
function argumentsFor(schema: SpecSchema): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 12, arbitrary: shaped(schema) },
    {
      weight: Array.isArray(schema.type) && schema.type.includes("null") ? 2 : 0,
      arbitrary: fc.constant(null),
    },
    { weight: 1, arbitrary: NOISE },
  );
}

function shaped(schema: SpecSchema): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum, "not_a_member");
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map(argumentsFor));
  switch (typeOf(schema)) {
    case "object": {
      const required = new Set(schema.required ?? []);
      const fields = Object.entries(schema.properties ?? {}).map(([name, field]) =>
        // A required field is sent nine times in ten, an optional one half the time.
        fc.tuple(fc.constant(name), argumentsFor(field), fc.integer({ min: 0, max: 9 })),
      );
      return fc.tuple(fc.tuple(...fields), fc.integer({ min: 0, max: 19 })).map(([sent, unknown]) => {
        const value: Record<string, unknown> = {};
        for (const [name, field, roll] of sent)
          if (required.has(name) ? roll > 0 : roll > 4) value[name] = field;
        if (unknown === 0) value.unexpected = 1;
        return value;
      });
    }
    case "array":
      return fc.array(argumentsFor(schema.items ?? {}), { maxLength: (schema.maxItems ?? 3) + 1 });
    case "string": {
      if (schema.format) return fc.constantFrom(...(FORMAT_VALUES[schema.format] ?? ["x"]));
      const length = fc.integer({
        min: Math.max(0, (schema.minLength ?? 0) - 1),
        max: Math.min(60, (schema.maxLength ?? 8) + 1),
      });
      const text = length.chain((n) => fc.string({ minLength: n, maxLength: n, unit: CHARACTERS }));
      if (!schema.pattern) return text;
      const matching = fc.stringMatching(new RegExp(schema.pattern)).filter((value) => value.length <= 60);
      return fc.oneof(matching, text);
    }
    case "integer":
    case "number": {
      const bounds = [schema.minimum, schema.maximum, schema.exclusiveMinimum, schema.exclusiveMaximum];
      const near = bounds
        .filter((bound): bound is number => typeof bound === "number")
        .flatMap((bound) => [bound - 1, bound, bound + 0.5, bound + 1]);
      return fc.oneof(fc.constantFrom(0, 1, 2.5, ...near), fc.integer({ min: -5, max: 100_000 }));
    }
    case "boolean":
      return fc.boolean();
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}

const ajv = new Ajv({ strict: false, allowUnionTypes: true });
addFormats(ajv);

const tools = catalog.namespaces().flatMap((namespace) => catalog.tools(namespace));

describe("tool specs and the proxy's validation", () => {
  it.each(tools.map((tool) => [`${tool.namespace}/${tool.name}`, tool] as const))(
    "%s: the spec accepts exactly the arguments the proxy accepts",
    (_name, tool) => {
      const schema = inputJsonSchema(tool);
      const spec = ajv.compile(withoutDialect(schema));
      fc.assert(
        fc.property(argumentsFor(schema as SpecSchema), (args) => {
          const accepted = validateArguments(tool.input, args).ok;
          expect(spec(omitNullOptionals(tool.input, args)), JSON.stringify(args)).toBe(accepted);
        }),
        plan({ seed: 20_261_205, numRuns: 150 }),
      );
    },
  );
});
