import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical-json";
import { sha256Hex } from "../../src/core/digest";
import { callDigest, deriveIdempotencyKey } from "../../src/core/idempotency-key";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);

const args = fc.dictionary(
  fc.string({ maxLength: 8 }),
  fc.oneof(
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string(), { maxLength: 3 }),
  ),
);

describe("a call's digest and its key from the arguments' canonical JSON computed once", () => {
  it("are the digest and the key of the arguments themselves, byte for byte", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string(),
        fc.string(),
        fc.string(),
        args,
        fc.option(fc.string()),
        async (tenant, runId, tool, values, intent) => {
          const text = canonicalJson(values);
          expect(await callDigest(tool, values, text)).toBe(await sha256Hex(canonicalJson([tool, values])));
          expect(await callDigest(tool, values)).toBe(await sha256Hex(canonicalJson([tool, values])));
          const input = { tenant, runId, tool, args: values, intent };
          const key = `idk_${await sha256Hex(canonicalJson([tenant, runId, tool, values, intent ?? null]))}`;
          expect(await deriveIdempotencyKey(input, text)).toBe(key);
          expect(await deriveIdempotencyKey(input)).toBe(key);
        },
      ),
      plan({ seed: 20_261_208, numRuns: 200 }),
    );
  });

  it("hashes the canonical text it is given, without writing the arguments again", async () => {
    // A text other than the arguments' shows which one was hashed: the caller's, computed once.
    expect(await callDigest("t", { a: 1 }, '{"b":2}')).toBe(await sha256Hex('["t",{"b":2}]'));
    expect(
      await deriveIdempotencyKey({ tenant: "x", runId: "r", tool: "t", args: { a: 1 } }, '{"b":2}'),
    ).toBe(`idk_${await sha256Hex('["x","r","t",{"b":2},null]')}`);
  });

  it("keeps the digest of absent arguments the digest of null", async () => {
    expect(await callDigest("lookup_order", undefined)).toBe(await sha256Hex('["lookup_order",null]'));
  });
});
