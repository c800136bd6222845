import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { InputSchema } from "../../src/catalog/define-tool";
import { validateArguments } from "../../src/machine/validate";
import { catalog, discoveryTools } from "../../src/tools";
import { type SpecSchema, typeOf } from "./support/spec-schema";

/**
 * A model that leaves out a required argument is told exactly that: "missing required field", at
 * the field's path, whatever the field's schema (a string, a number, an enum, a literal, a union,
 * a nested object's field, a field of an array's objects), and, for a field with a fixed set of
 * values, the allowed values in the hint. Checked for every required field of every tool the
 * catalog serves, from a valid example built from the tool's own input schema.
 */

/** One valid value for a JSON Schema: required properties only, at least one item per array. */
function exampleOf(schema: SpecSchema, at: string): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const option = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (option) return exampleOf(option, at);
  switch (typeOf(schema)) {
    case "object":
      return Object.fromEntries(
        (schema.required ?? []).map((key) => [
          key,
          exampleOf(schema.properties?.[key] ?? {}, `${at}.${key}`),
        ]),
      );
    case "array":
      return Array.from({ length: Math.max(1, schema.minItems ?? 0) }, (_, index) =>
        exampleOf(schema.items ?? {}, `${at}[${index}]`),
      );
    case "string": {
      if (schema.format === "date-time") return "2026-07-01T12:00:00Z";
      if (schema.format === "email") return "someone@example.com";
      if (schema.format === "uri") return "https://example.com/";
      if (schema.format) throw new Error(`${at}: no example for string format ${schema.format}`);
      const length = Math.max(1, schema.minLength ?? 0);
      if (!schema.pattern) return "x".repeat(length);
      const matching = fc
        .stringMatching(new RegExp(schema.pattern))
        .filter((text) => text.length >= length && text.length <= 60);
      return fc.sample(matching, { numRuns: 1, seed: 7 })[0];
    }
    case "integer":
    case "number":
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case "boolean":
      return true;
    default:
      throw new Error(`${at}: no example for ${JSON.stringify(schema)}`);
  }
}

interface RequiredField {
  /** As problems name it: `destination.city`, `items[0].sku`. */
  field: string;
  path: (string | number)[];
  /** The field's allowed values, when it has a fixed set. */
  values: unknown[] | null;
}

/** Every required field, nested ones included, of a JSON Schema object. */
function requiredFields(schema: SpecSchema, path: (string | number)[] = []): RequiredField[] {
  const fields: RequiredField[] = [];
  // A union's example is its first option; a field all options share with fixed values (a
  // discriminator) allows the values of every option.
  const options = schema.anyOf ?? schema.oneOf ?? [schema];
  const [object = schema] = options;
  if (typeOf(object) === "array" && object.items) return requiredFields(object.items, [...path, 0]);
  if (typeOf(object) !== "object") return fields;
  for (const key of object.required ?? []) {
    const child = object.properties?.[key] ?? {};
    const childPath = [...path, key];
    const shared = options.map((option) =>
      option.properties?.[key] ? fixedValues(option.properties[key]) : null,
    );
    const values = shared.every((each) => each !== null) ? shared.flat() : fixedValues(child);
    fields.push({ field: fieldName(childPath), path: childPath, values });
    fields.push(...requiredFields(child, childPath));
  }
  return fields;
}

function fixedValues(schema: SpecSchema): unknown[] | null {
  if (schema.enum) return schema.enum;
  if (schema.const !== undefined) return [schema.const];
  const options = schema.anyOf ?? schema.oneOf;
  if (options?.every((option) => option.const !== undefined || option.enum)) {
    return options.flatMap((option) => option.enum ?? [option.const]);
  }
  return null;
}

function fieldName(path: readonly (string | number)[]): string {
  return path
    .map((part, index) => (typeof part === "number" ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join("");
}

function without(value: unknown, path: readonly (string | number)[]): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let holder: Record<string | number, unknown> = copy;
  for (const part of path.slice(0, -1)) holder = holder[part] as Record<string | number, unknown>;
  delete holder[path[path.length - 1] as string | number];
  return copy;
}

function missingFieldCases(name: string, input: InputSchema) {
  const json = z.toJSONSchema(input, { io: "input", unrepresentable: "any" }) as SpecSchema;
  const example = exampleOf(json, "args");
  return { name, input, example, fields: requiredFields(json) };
}

function checkMissing({ name, input, example, fields }: ReturnType<typeof missingFieldCases>): void {
  expect(validateArguments(input, example), `${name}: the example itself is valid`).toMatchObject({
    ok: true,
  });
  for (const { field, path, values } of fields) {
    const checked = validateArguments(input, without(example, path));
    if (checked.ok) throw new Error(`${name}: ${field} left out, and the arguments passed`);
    const problem = checked.problems.find((candidate) => candidate.field === field);
    expect(problem, `${name}: ${field} left out: ${JSON.stringify(checked.problems)}`).toMatchObject({
      reason: "missing required field",
    });
    if (values) {
      const allowed = `Allowed values: ${values.map((value) => JSON.stringify(value)).join(", ")}.`;
      expect(problem?.hint, `${name}: ${field}'s allowed values`).toContain(allowed);
    }
  }
}

const served = catalog
  .namespaces()
  .flatMap((namespace) =>
    [...catalog.tools(namespace), ...discoveryTools(namespace)].map((tool) =>
      missingFieldCases(`${namespace}.${tool.name}`, tool.input),
    ),
  );

describe("a missing required argument reads as missing", () => {
  it("the catalog has tools with required fields of several kinds to check", () => {
    const all = served.flatMap((entry) => entry.fields);
    expect(served.length).toBeGreaterThanOrEqual(20);
    expect(all.some((field) => field.values !== null)).toBe(true);
    expect(all.some((field) => field.path.length > 1)).toBe(true);
  });

  it.each(served.map((entry) => [entry.name, entry] as const))("%s: every required field", (_name, entry) => {
    checkMissing(entry);
  });

  const kinds = z.strictObject({
    mode: z.enum(["fast", "safe"]).describe("How to run."),
    version: z.literal(2).describe("The format version."),
    size: z.union([z.literal("s"), z.literal("m"), z.literal("l")]).describe("A size."),
    amount: z.union([z.number(), z.string().regex(/^\d+$/)]).describe("A number, or digits."),
    target: z
      .discriminatedUnion("kind", [
        z.strictObject({ kind: z.literal("order"), order_id: z.string().describe("The order.") }),
        z.strictObject({ kind: z.literal("ticket"), ticket_id: z.string() }),
      ])
      .describe("What it is about."),
    address: z.strictObject({
      city: z.string().min(1).describe("The city."),
      country: z.enum(["US", "DE"]).describe("The country."),
    }),
    lines: z
      .array(
        z.strictObject({
          sku: z.string().describe("The item."),
          unit: z.enum(["each", "box"]),
          price: z.strictObject({ cents: z.number().int() }),
        }),
      )
      .min(1),
    flags: z.array(z.string()),
    meta: z.record(z.string(), z.string()),
    note: z.string().nullable().describe("A note, or null."),
    optional_mode: z.enum(["a", "b"]).optional(),
  });

  it("every kind of schema: enum, literal, union, nested object, array of objects, record, nullable", () => {
    const entry = missingFieldCases("kinds", kinds);
    expect(entry.fields.map((field) => field.field)).toEqual([
      "mode",
      "version",
      "size",
      "amount",
      "target",
      "target.kind",
      "target.order_id",
      "address",
      "address.city",
      "address.country",
      "lines",
      "lines[0].sku",
      "lines[0].unit",
      "lines[0].price",
      "lines[0].price.cents",
      "flags",
      "meta",
      "note",
    ]);
    checkMissing(entry);
  });

  it("all missing at once: one problem per field, each saying missing, with allowed values where fixed", () => {
    const checked = validateArguments(kinds, {});
    if (checked.ok) throw new Error("empty arguments passed");
    expect(checked.problems).toEqual([
      {
        field: "mode",
        reason: "missing required field",
        hint: 'Allowed values: "fast", "safe". How to run.',
      },
      { field: "version", reason: "missing required field", hint: "Allowed values: 2. The format version." },
      { field: "size", reason: "missing required field", hint: 'Allowed values: "s", "m", "l". A size.' },
      {
        field: "amount",
        reason: "missing required field",
        hint: "One of: number, string. A number, or digits.",
      },
      { field: "target", reason: "missing required field", hint: "What it is about." },
      { field: "address", reason: "missing required field", hint: "See the tool's input schema." },
      { field: "lines", reason: "missing required field", hint: "See the tool's input schema." },
      { field: "flags", reason: "missing required field", hint: "See the tool's input schema." },
      { field: "meta", reason: "missing required field", hint: "See the tool's input schema." },
      { field: "note", reason: "missing required field", hint: "A note, or null." },
    ]);
  });

  it("values present but wrong keep their own reasons, located inside unions too", () => {
    const checked = validateArguments(kinds, {
      mode: "slow",
      version: 3,
      size: "xl",
      amount: true,
      target: { kind: "invoice" },
      address: { city: "", country: "FR" },
      lines: [{ sku: "a", unit: "each", price: { cents: "5" } }],
      flags: [],
      meta: {},
      note: null,
    });
    if (checked.ok) throw new Error("wrong arguments passed");
    expect(checked.problems.map(({ field, reason }) => [field, reason])).toEqual([
      ["mode", '"slow" is not an allowed value'],
      ["version", "3 is not an allowed value"],
      ["size", '"xl" is not an allowed value'],
      ["amount", "expected number or string, got boolean"],
      ["target.kind", '"invoice" is not an allowed value'],
      ["address.city", "must be at least 1 characters"],
      ["address.country", '"FR" is not an allowed value'],
      ["lines[0].price.cents", "expected number, got string"],
    ]);
    const union = z.strictObject({
      contact: z.union([
        z.strictObject({ email: z.string().describe("An email address.") }),
        z.strictObject({ phone: z.string(), country: z.string() }),
      ]),
    });
    const wrong = validateArguments(union, { contact: { email: 5 } });
    expect(wrong).toEqual({
      ok: false,
      problems: [
        { field: "contact.email", reason: "expected string, got integer", hint: "An email address." },
      ],
    });
  });
});
