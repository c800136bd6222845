import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readCallBody } from "../../src/door/call-body";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);

describe("reading a call's body", () => {
  it("names the tool first, then the arguments, then each field a call does not have", () => {
    const read = readCallBody({ dry_run: true, args: [1], tool: "", idempotency_key: "k" });
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.problems.map((problem) => [problem.field, problem.reason])).toEqual([
      ["tool", "expected a non-empty string"],
      ["args", "expected an object"],
      ["dry_run", "unknown field"],
      ["idempotency_key", "unknown field"],
    ]);
  });

  it("reads absent arguments as an empty object, so both doors derive one key for one call", () => {
    expect(readCallBody({ tool: "lookup_order" })).toEqual({ ok: true, tool: "lookup_order", args: {} });
  });

  it("keeps a __proto__ key of the arguments as a field, for the edge to refuse by name", () => {
    const read = readCallBody(
      JSON.parse('{"tool": "lookup_order", "args": {"__proto__": {"order_id": "A1001"}}}'),
    );
    expect(read.ok && Object.keys(read.args as object)).toEqual(["__proto__"]);
  });

  it("accepts exactly the bodies with a named tool, object arguments and no other field", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue(),
          fc.record(
            { tool: fc.oneof(fc.string(), fc.jsonValue()), args: fc.jsonValue(), extra: fc.jsonValue() },
            { requiredKeys: [] },
          ),
        ),
        (body) => {
          const record = typeof body === "object" && body !== null && !Array.isArray(body) ? body : null;
          const args = record && "args" in record ? record.args : {};
          const valid =
            record !== null &&
            typeof record.tool === "string" &&
            record.tool.length > 0 &&
            typeof args === "object" &&
            args !== null &&
            !Array.isArray(args) &&
            Object.keys(record).every((field) => field === "tool" || field === "args");
          const read = readCallBody(body);
          expect(read.ok).toBe(valid);
          if (!read.ok) expect(read.problems.length).toBeGreaterThan(0);
        },
      ),
      plan({ seed: 53_001, numRuns: 300 }),
    );
  });
});
