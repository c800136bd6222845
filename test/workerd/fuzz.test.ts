import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type * as z from "zod";
import { parseTenants } from "../../src/config/tenants";
import { canonicalJson } from "../../src/core/canonical-json";
import { type CallRequest, prepareCall } from "../../src/machine/prepare";
import { validateArguments } from "../../src/machine/validate";
import { catalog } from "../../src/tools";
import {
  type Envelope,
  ERROR_CODES,
  envelopeSchema,
  failure,
  httpStatusFor,
  NEXT_ACTIONS,
  problemSchema,
  success,
} from "../../src/wire/envelope";
import { propertyPlans } from "../property-plan";
import { openRun, postRaw } from "./helpers";

const plan = propertyPlans(env);

/**
 * Properties over random and near-miss input. Runs are bounded (30–100 per property) so the file
 * stays fast. A failure prints the shrunk counterexample and the seed; pass `{ seed, path }` to
 * fc.assert to replay it.
 */

const TOOLS = catalog.tools("support");
const tenants = parseTenants(env.TENANTS);
const acme = tenants.acme;
if (!acme) throw new Error("the sandbox config has no acme tenant");
const POLICY = { tenantId: "acme", tenant: acme };
const CTX = { call_id: "call_fuzz", environment: "sandbox" as const };

/** One valid call per demo tool: the starting point of every near miss. */
const VALID_ARGS: Record<string, Record<string, unknown>> = {
  lookup_order: { order_id: "A1001" },
  search_refund_policy: { query: "late delivery" },
  get_customer_profile: { customer_id: "C100" },
  draft_customer_email: {
    customer_id: "C100",
    template: "apology",
    order_id: "A1001",
    notes: "It was late.",
  },
  create_internal_ticket: { customer_id: "C100", priority: "high", summary: "Refund of 900.00 requested" },
  issue_refund: { order_id: "A1001", amount_cents: 1999, reason: "out_of_stock" },
  send_customer_email: { draft_id: "dr_4Fz0aQ9mW2xYc7Lp1Rt8Vb", draft_version: 1 },
  lookup_email: { email_id: "em_4Fz0aQ9mW2xYc7Lp1Rt8Vb" },
  lookup_ticket: { ticket_id: "tk_4Fz0aQ9mW2xYc7Lp1Rt8Vb" },
  read_result_page: { handle: "res_0123456789abcdef01234567", cursor: 0 },
};

function validArgsOf(tool: string): Record<string, unknown> {
  const args = VALID_ARGS[tool];
  if (!args) throw new Error(`add a valid example for ${tool} to VALID_ARGS`);
  return args;
}

const camelCase = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** A mutation of valid arguments, and whether the result must be refused. */
type NearMiss = { args: Record<string, unknown>; mustFail: boolean; field?: string };

function nearMiss(tool: string): fc.Arbitrary<NearMiss> {
  const valid = validArgsOf(tool);
  const shape = TOOLS.find((candidate) => candidate.name === tool)?.input.shape ?? {};
  const fields = Object.keys(valid);
  const required = fields.filter((field) => !(shape[field] as z.ZodType | undefined)?.isOptional());
  const ofType = (type: string) => fields.filter((name) => typeof valid[name] === type);
  const without = (name: string) => Object.fromEntries(Object.entries(valid).filter(([key]) => key !== name));
  const wrongValue = fc.oneof(
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string(), { maxLength: 3 }),
    fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
  );
  // Each mutation draws only from fields it applies to: a filter that rarely passes would make
  // fast-check search forever.
  const mutations: fc.Arbitrary<NearMiss>[] = [
    fc
      .constantFrom(...fields)
      .map((name) => ({ args: without(name), mustFail: required.includes(name), field: name })),
    fc.tuple(fc.constantFrom(...fields), wrongValue).map(([name, value]) => ({
      args: { ...valid, [name]: value },
      // null for an optional field means "absent" (OpenAI strict mode sends it), so it is no mistake.
      mustFail: typeof value !== typeof valid[name] && !(value === null && !required.includes(name)),
      field: name,
    })),
    fc
      .tuple(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }))
      .map(([name, value]) => ({
        args: { ...valid, [`${name}_extra`]: value },
        mustFail: true,
        field: `${name}_extra`,
      })),
  ];
  const snake = fields.filter((name) => camelCase(name) !== name);
  if (snake.length > 0) {
    mutations.push(
      fc.constantFrom(...snake).map((name) => ({
        args: { ...without(name), [camelCase(name)]: valid[name] },
        mustFail: true,
        field: camelCase(name),
      })),
    );
  }
  const numbers = ofType("number");
  if (numbers.length > 0) {
    mutations.push(
      fc
        .tuple(fc.constantFrom(...numbers), fc.constantFrom(-1, -1e12, 0.5, Number.MAX_SAFE_INTEGER + 2))
        .map(([name, value]) => ({ args: { ...valid, [name]: value }, mustFail: true, field: name })),
    );
  }
  const strings = ofType("string");
  if (strings.length > 0) {
    mutations.push(
      fc
        .tuple(fc.constantFrom(...strings), fc.integer({ min: 5_001, max: 20_000 }))
        .map(([name, length]) => ({
          args: { ...valid, [name]: "x".repeat(length) },
          mustFail: true,
          field: name,
        })),
    );
  }
  return fc.oneof(...mutations);
}

function expectWellFormedProblems(problems: unknown[]) {
  expect(problems.length).toBeGreaterThan(0);
  for (const problem of problems) {
    const parsed = problemSchema().parse(problem);
    expect(parsed.field.length).toBeGreaterThan(0);
    expect(parsed.reason.length).toBeGreaterThan(0);
    expect(parsed.hint.length).toBeGreaterThan(0);
  }
}

/** An envelope for whatever prepareCall decided, checked against the schema. */
function envelopeOf(request: CallRequest): Envelope {
  const prepared = prepareCall(catalog, "support", request, POLICY);
  if (prepared.refusal) {
    if (prepared.refusal.code === "validation_error")
      expectWellFormedProblems(prepared.refusal.problems ?? []);
    return envelopeSchema().parse(failure({ ...CTX, tool: prepared.toolName }, prepared.refusal));
  }
  expect(prepared.tool).not.toBeNull();
  expect(prepared.args).not.toBeNull();
  return envelopeSchema().parse(success({ ...CTX, tool: prepared.toolName }, { dispatched: true }));
}

describe("validators under random and near-miss arguments", () => {
  it("accept each tool's valid example, so the near misses start from a valid call", () => {
    for (const tool of TOOLS)
      expect(validateArguments(tool.input, validArgsOf(tool.name)).ok, tool.name).toBe(true);
  });

  it.each(TOOLS.map((tool) => [tool.name, tool] as const))(
    "%s: any JSON value is validated without throwing, with well-formed problems",
    (_name, tool) => {
      fc.assert(
        fc.property(fc.jsonValue({ maxDepth: 4 }), (args) => {
          const result = validateArguments(tool.input, args);
          if (!result.ok) expectWellFormedProblems(result.problems);
        }),
        plan({ seed: 2_026_120_404, numRuns: 100 }),
      );
    },
  );

  it.each(TOOLS.map((tool) => [tool.name, tool] as const))(
    "%s: a near miss is refused, naming the field, and never throws",
    (name, tool) => {
      fc.assert(
        fc.property(nearMiss(name), ({ args, mustFail, field }) => {
          const result = validateArguments(tool.input, args);
          if (!mustFail) return;
          expect(result.ok).toBe(false);
          if (result.ok) return;
          expectWellFormedProblems(result.problems);
          if (field) expect(result.problems.map((problem) => problem.field)).toContain(field);
        }),
        plan({ seed: 2_026_120_406, numRuns: 100 }),
      );
    },
  );

  it("prepareCall turns any request into a dispatchable call or a valid refusal envelope", () => {
    const request: fc.Arbitrary<CallRequest> = fc.oneof(
      fc.record({
        ok: fc.constant(true as const),
        tool: fc.oneof(fc.constantFrom(...TOOLS.map((tool) => tool.name)), fc.string()),
        args: fc.jsonValue({ maxDepth: 3 }),
      }),
      fc
        .constantFrom(...TOOLS.map((tool) => tool.name))
        .chain((tool) => nearMiss(tool).map(({ args }) => ({ ok: true as const, tool, args }))),
      fc.record({
        ok: fc.constant(false as const),
        tool: fc.option(fc.string()),
        args: fc.jsonValue({ maxDepth: 2 }),
        problems: fc.array(
          fc.record({
            field: fc.string({ minLength: 1 }),
            reason: fc.string({ minLength: 1 }),
            hint: fc.string({ minLength: 1 }),
          }),
          { minLength: 1, maxLength: 3 },
        ),
      }),
    );
    fc.assert(
      fc.property(request, (call) => {
        const envelope = envelopeOf(call);
        expect(httpStatusFor(envelope) >= 400).toBe(envelope.outcome !== "success");
      }),
      plan({ seed: 2_026_120_408, numRuns: 100 }),
    );
  });
});

/** The same value with every object's keys in another order. */
function reorderKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item, index) => reorderKeys(item, seed + index));
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value);
  // A seeded rotation plus a reversal: a different order for almost every object.
  const rotated = entries.map((_, index) => entries[(index + seed) % entries.length] as [string, unknown]);
  if (seed % 2 === 1) rotated.reverse();
  // fromEntries defines keys like "__proto__" as data, as JSON.parse does.
  return Object.fromEntries(rotated.map(([key, item]) => [key, reorderKeys(item, seed + 1)]));
}

/** Equality of JSON values, ignoring key order; the ground truth canonical JSON must agree with. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, i) => jsonEqual(item, b[i]))
    );
  }
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    const keysA = Object.keys(a);
    const keysB = Object.keys(b);
    return (
      keysA.length === keysB.length &&
      keysA.every(
        (key) =>
          Object.hasOwn(b, key) &&
          jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
      )
    );
  }
  // -0 and 0 are one JSON number.
  return a === b || (typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b));
}

describe("canonical JSON", () => {
  const json = fc.jsonValue({ maxDepth: 4 });

  it("is stable under key reordering, indentation and a parse round trip", () => {
    fc.assert(
      fc.property(json, fc.nat(), fc.constantFrom(0, 2, "\t"), (value, seed, indent) => {
        const reparsed = JSON.parse(JSON.stringify(reorderKeys(value, seed), null, indent));
        expect(canonicalJson(reparsed)).toBe(canonicalJson(value));
      }),
      plan({ seed: 2_026_120_410, numRuns: 100 }),
    );
  });

  it("is distinct for distinct values and equal for equal ones", () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        expect(canonicalJson(a) === canonicalJson(b)).toBe(jsonEqual(a, b));
      }),
      plan({ seed: 2_026_120_412, numRuns: 100 }),
    );
  });

  it("changes when any single leaf changes", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1 }),
        fc.nat(),
        (value, pick) => {
          const keys = Object.keys(value);
          const key = keys[pick % keys.length] as string;
          const changed = Object.fromEntries(
            Object.entries(value).map(([k, v]) => [k, k === key ? { was: v } : v]),
          );
          expect(canonicalJson(changed)).not.toBe(canonicalJson(value));
        },
      ),
      plan({ seed: 2_026_120_414, numRuns: 100 }),
    );
  });

  it("is itself JSON that parses back to an equal value", () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(jsonEqual(JSON.parse(canonicalJson(value)), value)).toBe(true);
      }),
      plan({ seed: 2_026_120_416, numRuns: 100 }),
    );
  });
});

describe("the envelope schema", () => {
  const problem = fc.record({ field: fc.string(), reason: fc.string(), hint: fc.string() });
  const budget = fc.option(
    fc.record({
      calls_left: fc.nat(),
      writes_left: fc.nat(),
      destructive_left: fc.nat(),
      deadline_ms_left: fc.nat(),
    }),
  );

  it("holds for a failure of every error code, whatever its details", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ERROR_CODES),
        fc.record(
          {
            message: fc.string(),
            problems: fc.array(problem, { maxLength: 3 }),
            retry_after_ms: fc.option(fc.nat()),
            side_effect_confirmed: fc.option(fc.boolean()),
            external_id: fc.option(fc.string()),
            recommended_next_action: fc.constantFrom(...NEXT_ACTIONS),
            details: fc.option(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }))),
            outcome: fc.constantFrom("retryable_failure" as const, "terminal_failure" as const),
          },
          { requiredKeys: ["message"] },
        ),
        budget,
        fc.option(fc.string()),
        (code, spec, budgetLeft, tool) => {
          const envelope = failure({ ...CTX, tool, budget: budgetLeft }, { code, ...spec });
          expect(envelopeSchema().safeParse(envelope).success).toBe(true);
          expect(envelope.error?.retryable).toBe(envelope.outcome === "retryable_failure");
          expect(httpStatusFor(envelope)).toBeGreaterThanOrEqual(400);
        },
      ),
      plan({ seed: 2_026_120_418, numRuns: 100 }),
    );
  });

  it("holds for a success carrying any JSON data", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), budget, (data, budgetLeft) => {
        const envelope = success({ ...CTX, tool: "lookup_order", budget: budgetLeft }, data);
        expect(envelopeSchema().safeParse(envelope).success).toBe(true);
        expect(httpStatusFor(envelope)).toBe(200);
      }),
      plan({ seed: 2_026_120_420, numRuns: 50 }),
    );
  });
});

describe("the worker under random bodies", () => {
  const toolName = fc.oneof(fc.constantFrom(...TOOLS.map((tool) => tool.name)), fc.string({ maxLength: 80 }));
  const body = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
    fc.string({ maxLength: 200 }),
    fc.record({ tool: toolName, args: fc.jsonValue({ maxDepth: 3 }) }).map((call) => JSON.stringify(call)),
    fc
      .tuple(fc.constantFrom(...TOOLS.map((tool) => tool.name)), fc.integer({ min: 300, max: 400 }))
      .map(
        ([tool, exponent]) => `{"tool":"${tool}","args":{"amount_cents":1e${exponent},"order_id":"I3001"}}`,
      ),
    fc
      .constantFrom(...TOOLS.map((tool) => tool.name))
      .chain((tool) => nearMiss(tool).map(({ args }) => JSON.stringify({ tool, args }))),
  );

  it("answers every body with an envelope whose status mirrors it, never an internal error", async () => {
    const run = await openRun("initech", { namespace: "support", limits: { max_calls: 200 } });
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        const { status, body: envelope } = await postRaw(run, text);
        expect(envelope.error?.code).not.toBe("internal_error");
        expect(status).toBe(httpStatusFor(envelope));
        expect(status >= 400).toBe(envelope.outcome !== "success");
      }),
      plan({ seed: 2_026_120_422, numRuns: 30 }),
    );
  });
});

describe("the ledger defends itself", () => {
  it("refuses a non-finite number that reaches prepareCall directly, without throwing", () => {
    const tenant = parseTenants(env.TENANTS).acme;
    if (!tenant) throw new Error("acme is configured");
    const prepared = prepareCall(
      catalog,
      "support",
      {
        ok: true,
        tool: "issue_refund",
        args: { order_id: "A1001", amount_cents: Number.POSITIVE_INFINITY, reason: "user_cancel" },
      },
      { tenantId: "acme", tenant },
    );
    expect(prepared.refusal?.code).toBe("validation_error");
    expect(prepared.rawArgs).toBeNull();
  });
});
