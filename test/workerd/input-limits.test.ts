import { describe, expect, it } from "vitest";
import { INPUT_LIMITS } from "../../src/core/input-limits";
import { structuralProblems } from "../../src/machine/limit";
import { callTool, KEYS, openRun, postRaw, request, type TestRun, traceOf } from "./helpers";

function nested(levels: number): unknown {
  let value: unknown = "leaf";
  for (let level = 0; level < levels; level++) value = { a: value };
  return value;
}

function callWithHeaders(run: TestRun, headers: Record<string, string>) {
  return callTool(run, "lookup_order", { order_id: "A1001" }, headers);
}

async function callsUsed(run: TestRun): Promise<number> {
  const { body } = await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } });
  return (body.data as { used: { calls_used: number } }).used.calls_used;
}

describe("header limits", () => {
  it("refuse an Authorization header over the limit with 431, before it is hashed or verified", async () => {
    const { status, body } = await request("/v1/runs", {
      method: "POST",
      headers: { authorization: `Bearer ${"k".repeat(2_000)}` },
      body: JSON.stringify({ namespace: "support" }),
    });
    expect(status).toBe(431);
    expect(body.error?.code).toBe("validation_error");
    expect(body.error?.problems).toEqual([
      {
        field: "headers.authorization",
        reason: "2007 bytes, over the limit",
        hint: expect.stringContaining(`At most ${INPUT_LIMITS.authorization_bytes} bytes`),
      },
    ]);
  });

  it("refuse an X-Call-Intent over the limit and spend no budget on it", async () => {
    const run = await openRun();
    const tooLong = await callWithHeaders(run, {
      "x-call-intent": "i".repeat(INPUT_LIMITS.intent_bytes + 1),
    });
    expect(tooLong.status).toBe(431);
    expect(tooLong.body.error?.problems?.[0]).toMatchObject({
      field: "headers.x-call-intent",
      hint: expect.stringContaining(`At most ${INPUT_LIMITS.intent_bytes} bytes`),
    });
    expect(await callsUsed(run)).toBe(0);
    const atLimit = await callWithHeaders(run, { "x-call-intent": "i".repeat(INPUT_LIMITS.intent_bytes) });
    expect(atLimit.status).toBe(200);
  });

  it("refuse more header bytes in total than the limit, even when each header is small", async () => {
    const run = await openRun();
    const many = Object.fromEntries(
      Array.from({ length: 40 }, (_, index) => [`x-pad-${index}`, "p".repeat(500)]),
    );
    const { status, body } = await callWithHeaders(run, many);
    expect(status).toBe(431);
    expect(body.error?.problems?.[0]).toMatchObject({
      field: "headers",
      hint: `At most ${INPUT_LIMITS.header_bytes} bytes of request headers in total.`,
    });
  });
});

describe("structural limits of a call body", () => {
  it.each([
    [
      "arguments nested deeper than the limit",
      { tool: "lookup_order", args: nested(10) },
      "args.a.a.a.a.a.a.a.a.a",
      "nested deeper than 10 levels",
    ],
    [
      "a string longer than the limit",
      { tool: "search_refund_policy", args: { query: "q".repeat(10_001) } },
      "args.query",
      "a string of 10001 characters, over the limit",
    ],
    [
      "an array longer than the limit",
      { tool: "lookup_order", args: { order_id: Array(101).fill("A1001") } },
      "args.order_id",
      "an array of 101 items, over the limit",
    ],
    [
      "an object with more keys than the limit",
      { tool: "lookup_order", args: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, 1])) },
      "args",
      "an object with 51 fields, over the limit",
    ],
    [
      "a field name longer than the limit",
      { tool: "lookup_order", args: { ["k".repeat(129)]: 1 } },
      `args.${"k".repeat(32)}…`,
      "a field name of 129 characters, over the limit",
    ],
    [
      "a tool name longer than the limit",
      { tool: `lookup_${"o".repeat(60)}`, args: {} },
      "tool",
      "a tool name of 67 characters, over the limit",
    ],
    [
      "a list of tools",
      { tool: ["lookup_order", "issue_refund"], args: {} },
      "tool",
      "a list of 2 tools; a request calls exactly one",
    ],
  ])("refuse %s with 422, naming the field and the limit", async (_case, body, field, reason) => {
    const run = await openRun();
    const { status, body: envelope } = await postRaw(run, JSON.stringify(body));
    expect(status).toBe(422);
    expect(envelope.error?.code).toBe("validation_error");
    expect(envelope.error?.problems).toContainEqual(expect.objectContaining({ field, reason }));
  });

  it("refuse an array of calls clearly: one tool call per request", async () => {
    const run = await openRun();
    const call = { tool: "lookup_order", args: { order_id: "A1001" } };
    const { status, body } = await postRaw(run, JSON.stringify([call, call]));
    expect(status).toBe(422);
    expect(body.error?.message).toMatch(/exactly one tool call/);
    expect(body.error?.problems).toEqual([
      {
        field: "body",
        reason: "expected a JSON object",
        hint: expect.stringContaining("this one is an array of 2"),
      },
    ]);
  });

  it("refuse a number JSON cannot hold instead of failing inside the ledger", async () => {
    const run = await openRun();
    const { status, body } = await postRaw(
      run,
      '{"tool":"issue_refund","args":{"order_id":"A1001","amount_cents":1e400,"reason":"user_cancel"}}',
    );
    expect(status).toBe(422);
    expect(body.error?.problems).toEqual([
      expect.objectContaining({ field: "args.amount_cents", reason: "a number too large to represent" }),
    ]);
  });

  it("answer a hostile 30,000-level nesting at once, without recursing through it", async () => {
    const run = await openRun();
    const depth = 30_000;
    const started = Date.now();
    const { status, body } = await postRaw(
      run,
      `{"tool":"lookup_order","args":${"[".repeat(depth)}${"]".repeat(depth)}}`,
    );
    expect(status).toBe(422);
    expect(body.error?.problems).toHaveLength(1);
    expect(body.error?.problems?.[0]?.reason).toBe("nested deeper than 10 levels");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("leave a tool's own schema to explain values within the structural limits", async () => {
    const run = await openRun();
    const { status, body } = await callTool(run, "search_refund_policy", { query: "q".repeat(5_000) });
    expect(status).toBe(422);
    expect(body.error?.problems?.[0]).toMatchObject({
      field: "query",
      reason: "must be at most 200 characters",
    });
    const atDepth = await callTool(run, "lookup_order", { order_id: "A1001", extra: nested(8) });
    expect(atDepth.body.error?.problems).toContainEqual(
      expect.objectContaining({ field: "extra", reason: "unknown field" }),
    );
  });

  it("spend no budget and write no trace for refusals at the edge", async () => {
    const run = await openRun();
    await postRaw(run, JSON.stringify({ tool: "lookup_order", args: nested(20) }));
    await postRaw(run, JSON.stringify([{ tool: "lookup_order" }]));
    await callWithHeaders(run, { "x-call-intent": "i".repeat(1_000) });
    expect(await callsUsed(run)).toBe(0);
    expect(await traceOf(run)).toEqual([]);
  });
});

describe("structural limits of an open-run body", () => {
  it("refuse an oversized namespace and deep limits with 422", async () => {
    const { status, body } = await request("/v1/runs", {
      method: "POST",
      headers: { authorization: `Bearer ${KEYS.acme}`, "content-type": "application/json" },
      body: JSON.stringify({ namespace: "s".repeat(20_000), limits: nested(12) }),
    });
    expect(status).toBe(422);
    expect(body.error?.problems).toEqual([
      expect.objectContaining({ field: "namespace", reason: "a string of 20000 characters, over the limit" }),
      expect.objectContaining({ field: "limits.a.a.a.a.a.a.a.a.a", reason: "nested deeper than 10 levels" }),
    ]);
  });

  it("refuse a body over 64 KiB with 413", async () => {
    const { status, body } = await request("/v1/runs", {
      method: "POST",
      headers: { authorization: `Bearer ${KEYS.acme}`, "content-type": "application/json" },
      body: JSON.stringify({ namespace: "support", padding: "p".repeat(70_000) }),
    });
    expect(status).toBe(413);
    expect(body.error?.problems?.[0]).toMatchObject({ field: "body", reason: "too large" });
  });
});

describe("structuralProblems (pure)", () => {
  it("accept values exactly at every limit", () => {
    const atLimits = {
      s: "x".repeat(INPUT_LIMITS.string_chars),
      list: Array(INPUT_LIMITS.array_items).fill(0),
      ["k".repeat(INPUT_LIMITS.key_chars)]: nested(INPUT_LIMITS.depth - 1),
    };
    expect(structuralProblems(atLimits)).toEqual([]);
    expect(structuralProblems({ deep: nested(INPUT_LIMITS.depth) })).toHaveLength(1);
    expect(
      structuralProblems(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, i]))),
    ).toEqual([]);
  });

  it("report at most 20 problems however many there are", () => {
    const hostile = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, "x".repeat(10_001)]));
    expect(structuralProblems(hostile)).toHaveLength(20);
  });
});
