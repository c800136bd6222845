import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { catalogProblems } from "../../src/catalog/catalog";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { ARGUMENTS_LEVEL, INPUT_LIMITS } from "../../src/core/input-limits";
import { structuralProblems } from "../../src/machine/limit";
import { propertyPlans } from "../property-plan";
import { widgetLookup } from "./support/widget-tool";

const plan = propertyPlans(process.env);

/**
 * The edge refuses, in every body, strings, arrays, objects, names and nesting past its limits
 * (core/input-limits.ts), so a tool whose input needs more could never be called. The catalog
 * refuses such a tool, naming the field, and so one with a part no call could hold (an optional
 * field, a list's items). The property holds the catalog to the edge itself: the catalog takes a
 * generated input exactly when the least call holding every part of it (each field, at least one
 * item of each list) passes the edge, sent the deepest way a call is carried (`use_tool`'s
 * `arguments`).
 */

function inputProblems(input: z.ZodType): string[] {
  return catalogProblems([{ ...widgetLookup, input } as ToolSpec])
    .problems.filter((problem) => problem.field === "input")
    .map((problem) => problem.message);
}

/** What reaches the edge for a call of these arguments through `use_tool`. */
function edgeProblems(args: unknown): string[] {
  return structuralProblems({ args: { name: "lookup_widget", arguments: args } }).map(
    (problem) => `${problem.field}: ${problem.reason}`,
  );
}

const described = <T extends z.ZodType>(schema: T): T => schema.describe("A field.") as T;

describe("inputs the edge's limits make impossible to send", () => {
  it("takes each limit as it is, and refuses one past it, naming the field", () => {
    const at = z.strictObject({
      text: described(z.string().min(INPUT_LIMITS.string_chars)),
      list: described(z.array(described(z.string())).min(INPUT_LIMITS.array_items)),
      ["k".repeat(INPUT_LIMITS.key_chars)]: described(z.string()),
    });
    expect(inputProblems(at)).toEqual([]);

    const past = z.strictObject({
      text: described(z.string().min(INPUT_LIMITS.string_chars + 1)),
      list: described(z.array(described(z.string())).length(INPUT_LIMITS.array_items + 1)),
      ["k".repeat(INPUT_LIMITS.key_chars + 1)]: described(z.string()).optional(),
    });
    expect(inputProblems(past)).toEqual([
      `tool "lookup_widget": field "text" needs at least 10001 characters; the edge refuses strings over 10000, so it could never be sent`,
      `tool "lookup_widget": field "list" needs at least 101 items; the edge refuses arrays over 100, so it could never be sent`,
      `tool "lookup_widget": field "${"k".repeat(129)}" has a name of 129 characters; the edge refuses names over 128, so rename it`,
    ]);
  });

  it("refuses an object requiring more fields than the edge takes, not one that merely offers them", () => {
    const fields = (count: number, optional: boolean) =>
      Object.fromEntries(
        Array.from({ length: count }, (_, index) => {
          const field = described(z.string());
          return [`f${index}`, optional && index > 0 ? field.optional() : field];
        }),
      );
    expect(inputProblems(z.strictObject(fields(INPUT_LIMITS.object_keys + 1, true)))).toEqual([]);
    expect(inputProblems(z.strictObject(fields(INPUT_LIMITS.object_keys, false)))).toEqual([]);
    expect(inputProblems(z.strictObject(fields(INPUT_LIMITS.object_keys + 1, false)))).toEqual([
      `tool "lookup_widget": its input schema requires 51 fields; the edge refuses objects of more than 50, so it could never be sent`,
    ]);
  });

  it("refuses an object nested deeper than a call can carry, even an optional one", () => {
    const nested = (levels: number): z.ZodType =>
      levels === 0
        ? described(z.string())
        : described(z.strictObject({ next: nested(levels - 1) }).optional());
    const deepest = INPUT_LIMITS.depth - ARGUMENTS_LEVEL;
    expect(inputProblems(z.strictObject({ next: nested(deepest) }))).toEqual([]);
    expect(inputProblems(z.strictObject({ next: nested(deepest + 1) }))).toEqual([
      `tool "lookup_widget": field "${Array(deepest + 1)
        .fill("next")
        .join(
          ".",
        )}" nests 8 levels into the arguments; a call carries at most 7 (bodies nest at most 10 levels), so it could never be sent`,
    ]);
  });

  it("property: takes a tool exactly when the least call holding every part of its input passes the edge", () => {
    const nameLength = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(1, 8) },
      { weight: 1, arbitrary: fc.constantFrom(INPUT_LIMITS.key_chars, INPUT_LIMITS.key_chars + 1) },
    );
    const { node: tree } = fc.letrec<{ node: Node }>((tie) => ({
      node: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.record({
          kind: fc.constant("string" as const),
          min: fc.constantFrom(0, INPUT_LIMITS.string_chars, INPUT_LIMITS.string_chars + 1),
        }),
        // Arrays long enough to matter hold strings only, so the least call stays small.
        fc.record({
          kind: fc.constant("array" as const),
          min: fc.constantFrom(INPUT_LIMITS.array_items, INPUT_LIMITS.array_items + 1),
          of: fc.record({ kind: fc.constant("string" as const), min: fc.constant(0) }),
        }),
        fc.record({ kind: fc.constant("array" as const), min: fc.constantFrom(0, 1, 2), of: tie("node") }),
        // A chain of objects (and lists) around the deepest a call carries.
        fc.tuple(fc.integer({ min: 4, max: 9 }), fc.boolean()).map(([levels, lists]) => chain(levels, lists)),
        fc.record({
          kind: fc.constant("object" as const),
          fields: fc.array(
            fc.record({
              nameLength: nameLength,
              node: tie("node"),
            }),
            { minLength: 1, maxLength: 3 },
          ),
        }),
      ),
    }));
    const schemaOf = (node: Node): z.ZodType => {
      switch (node.kind) {
        case "string":
          return described(z.string().min(node.min));
        case "array":
          return described(z.array(schemaOf(node.of)).min(node.min));
        case "object":
          return described(
            z.strictObject(
              Object.fromEntries(
                node.fields.map((field, index) => [nameOf(index, field.nameLength), schemaOf(field.node)]),
              ),
            ),
          );
      }
    };
    const leastOf = (node: Node): unknown => {
      switch (node.kind) {
        case "string":
          return "x".repeat(node.min);
        case "array":
          return Array(Math.max(node.min, 1)).fill(leastOf(node.of));
        case "object":
          return Object.fromEntries(
            node.fields.map((field, index) => [nameOf(index, field.nameLength), leastOf(field.node)]),
          );
      }
    };
    const fieldsOf = fc.array(fc.record({ nameLength, node: tree }), {
      minLength: 1,
      maxLength: 3,
    });
    fc.assert(
      fc.property(fieldsOf, (fields) => {
        const root: Node = { kind: "object", fields };
        const schema = schemaOf(root);
        const least = leastOf(root);
        expect(schema.safeParse(least).success).toBe(true);
        const edge = edgeProblems(least);
        const catalog = inputProblems(schema);
        expect(catalog.length === 0, `edge: ${edge.join("; ")}\ncatalog: ${catalog.join("; ")}`).toBe(
          edge.length === 0,
        );
      }),
      plan({ seed: 20261205, numRuns: 200 }),
    );
  });
});

type Node =
  | { kind: "string"; min: number }
  | { kind: "array"; min: number; of: Node }
  | { kind: "object"; fields: Array<{ nameLength: number; node: Node }> };

/** `levels` containers around a string: objects, every other one a list when `lists`. */
function chain(levels: number, lists: boolean): Node {
  let node: Node = { kind: "string", min: 0 };
  for (let level = 0; level < levels; level++) {
    node =
      lists && level % 2 === 1
        ? { kind: "array", min: 1, of: node }
        : { kind: "object", fields: [{ nameLength: 1, node }] };
  }
  return node;
}

/** A distinct field name of the given length. */
function nameOf(index: number, length: number): string {
  const stem = `f${index}`;
  return stem + "x".repeat(Math.max(0, length - stem.length));
}
