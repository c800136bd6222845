import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical-json";
import { callDigest, deriveIdempotencyKey } from "../../src/core/idempotency-key";

const base = { tenant: "acme", runId: "run_1", tool: "issue_refund" };

describe("canonical JSON", () => {
  it("sorts keys at every depth", () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
  });

  it("ignores whitespace and key order of the source text", () => {
    const tight = JSON.parse('{"order_id":"A1001","amount_cents":100}');
    const loose = JSON.parse('{\n  "amount_cents" : 100 ,\n\t"order_id":"A1001"\n}');
    expect(canonicalJson(tight)).toBe(canonicalJson(loose));
  });

  it("treats 1 and 1.0 as the same number and normalises exponents", () => {
    expect(canonicalJson(JSON.parse("[1.0, 1e2, 0.10, -0]"))).toBe("[1,100,0.1,0]");
  });

  it("keeps arrays in order", () => {
    expect(canonicalJson([3, 1, 2])).not.toBe(canonicalJson([1, 2, 3]));
  });

  it("encodes unicode consistently, whether escaped or literal in the source", () => {
    expect(canonicalJson(JSON.parse('{"name":"caf\\u00e9 \\ud83d\\ude00"}'))).toBe(
      canonicalJson({ name: "café 😀" }),
    );
    expect(canonicalJson({ é: 1, e: 2 })).toBe('{"e":2,"é":1}');
  });

  it("refuses values JSON cannot carry", () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(/NaN/);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/function/);
  });
});

describe("idempotency keys", () => {
  const args = { order_id: "A1001", amount_cents: 100, reason: "user_cancel" };

  it("is the same for reordered arguments", async () => {
    const reordered = { reason: "user_cancel", amount_cents: 100, order_id: "A1001" };
    expect(await deriveIdempotencyKey({ ...base, args })).toBe(
      await deriveIdempotencyKey({ ...base, args: reordered }),
    );
  });

  it("differs for another run, another tenant, another tool, other arguments or an intent", async () => {
    const key = await deriveIdempotencyKey({ ...base, args });
    const variants = await Promise.all([
      deriveIdempotencyKey({ ...base, runId: "run_2", args }),
      deriveIdempotencyKey({ ...base, tenant: "globex", args }),
      deriveIdempotencyKey({ ...base, tool: "send_customer_email", args }),
      deriveIdempotencyKey({ ...base, args: { ...args, amount_cents: 101 } }),
      deriveIdempotencyKey({ ...base, args, intent: "second refund, approved by ops" }),
    ]);
    expect(new Set([key, ...variants]).size).toBe(6);
    expect(key).toMatch(/^idk_[0-9a-f]{64}$/);
  });

  it("cannot be steered by a field boundary trick", async () => {
    const a = await deriveIdempotencyKey({ tenant: "ac", runId: "me/run_1", tool: "t", args: {} });
    const b = await deriveIdempotencyKey({ tenant: "acme/run", runId: "_1", tool: "t", args: {} });
    expect(a).not.toBe(b);
  });

  it("gives repeat detection one digest per tool and canonical arguments", async () => {
    expect(await callDigest("lookup_order", { order_id: "A1001" })).toBe(
      await callDigest("lookup_order", JSON.parse('{ "order_id" : "A1001" }')),
    );
    expect(await callDigest("lookup_order", { order_id: "A1001" })).not.toBe(
      await callDigest("lookup_order", { order_id: "A1002" }),
    );
  });
});
