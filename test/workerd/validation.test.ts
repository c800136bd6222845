import { describe, expect, it } from "vitest";
import { callTool, openRun, postRaw, request, sandboxRequests, traceOf } from "./helpers";

describe("structural validation of tool arguments", () => {
  it("names a missing field and hints with its description", async () => {
    const run = await openRun();
    const { status, body } = await callTool(run, "lookup_order", {});
    expect(status).toBe(422);
    expect(body.outcome).toBe("terminal_failure");
    expect(body.error?.code).toBe("validation_error");
    expect(body.error?.recommended_next_action).toBe("fix_arguments");
    expect(body.error?.side_effect_confirmed).toBe(false);
    expect(body.error?.problems).toEqual([
      { field: "order_id", reason: "missing required field", hint: expect.stringContaining("such as A1001") },
    ]);
  });

  it("refuses an unknown field, lists the valid ones and suggests the near miss", async () => {
    const run = await openRun();
    const { body } = await callTool(run, "lookup_order", { orderId: "A1001" });
    const problems = body.error?.problems ?? [];
    expect(problems).toContainEqual({
      field: "orderId",
      reason: "unknown field",
      hint: 'Did you mean "order_id"? Valid fields: order_id.',
    });
  });

  it("says which type was expected and which arrived", async () => {
    const run = await openRun();
    const { body } = await callTool(run, "issue_refund", {
      order_id: "A1001",
      amount_cents: "1999",
      reason: "user_cancel",
    });
    expect(body.error?.problems).toEqual([
      {
        field: "amount_cents",
        reason: "expected number, got string",
        hint: expect.stringContaining("in cents"),
      },
    ]);
  });

  it("lists the allowed values of an enum", async () => {
    const run = await openRun();
    const { body } = await callTool(run, "issue_refund", {
      order_id: "A1001",
      amount_cents: 100,
      reason: "changed mind",
    });
    expect(body.error?.problems?.[0]).toMatchObject({
      field: "reason",
      reason: '"changed mind" is not an allowed value',
      hint: expect.stringContaining('Allowed values: "user_cancel", "out_of_stock", "price_error"'),
    });
  });

  it("states numeric and length bounds", async () => {
    const run = await openRun();
    const refund = await callTool(run, "issue_refund", {
      order_id: "A1001",
      amount_cents: 0,
      reason: "user_cancel",
    });
    expect(refund.body.error?.problems?.[0]).toMatchObject({
      field: "amount_cents",
      reason: "must be at least 1",
    });
    const search = await callTool(run, "search_refund_policy", { query: "x".repeat(201) });
    expect(search.body.error?.problems?.[0]).toMatchObject({
      field: "query",
      reason: "must be at most 200 characters",
    });
    const integer = await callTool(run, "issue_refund", {
      order_id: "A1001",
      amount_cents: 10.5,
      reason: "user_cancel",
    });
    expect(integer.body.error?.problems?.[0]).toMatchObject({
      field: "amount_cents",
      reason: "expected int, got number",
    });
  });

  it("explains a malformed id with an example of the right shape", async () => {
    const run = await openRun();
    const { body } = await callTool(run, "lookup_order", { order_id: "order 1001" });
    expect(body.error?.problems?.[0]).toMatchObject({
      field: "order_id",
      reason: expect.stringContaining("such as A1001"),
    });
  });

  it("refuses an argument named like an idempotency key as an unknown field", async () => {
    const run = await openRun();
    const { body } = await callTool(run, "issue_refund", {
      order_id: "A1001",
      amount_cents: 100,
      reason: "user_cancel",
      idempotency_key: "model-made-this-up",
    });
    expect(body.error?.code).toBe("validation_error");
    expect(body.error?.problems).toContainEqual(
      expect.objectContaining({ field: "idempotency_key", reason: "unknown field" }),
    );
  });

  it.each([
    ["malformed JSON", '{"tool": "lookup_order", "args": {', "body", "not valid JSON"],
    ["a body that is an array", '[{"tool": "lookup_order"}]', "body", "expected a JSON object"],
    ["a body that is a string", '"lookup_order"', "body", "expected a JSON object"],
    [
      "args that are not an object",
      '{"tool": "lookup_order", "args": ["A1001"]}',
      "args",
      "expected an object",
    ],
    ["a missing tool", '{"args": {"order_id": "A1001"}}', "tool", "missing required field"],
    ["a tool that is not a string", '{"tool": 7, "args": {}}', "tool", "expected a non-empty string"],
    [
      "an extra top-level field",
      '{"tool": "lookup_order", "args": {"order_id": "A1001"}, "retry": true}',
      "retry",
      "unknown field",
    ],
  ])("answers %s with a validation envelope, not a bare 400", async (_case, raw, field, reason) => {
    const run = await openRun();
    const { status, body } = await postRaw(run, raw);
    expect(status).toBe(422);
    expect(body.error?.code).toBe("validation_error");
    expect(body.error?.problems).toContainEqual(expect.objectContaining({ field, reason }));
  });

  it("answers a body over the size limit with a 413 envelope", async () => {
    const run = await openRun();
    const { status, body } = await postRaw(
      run,
      JSON.stringify({ tool: "search_refund_policy", args: { query: "x".repeat(70_000) } }),
    );
    expect(status).toBe(413);
    expect(body.error?.code).toBe("validation_error");
    expect(body.error?.problems?.[0]).toMatchObject({ field: "body", reason: "too large" });
  });

  it("answers an unknown tool with not_found and the namespace's tools", async () => {
    const run = await openRun();
    const { status, body } = await callTool(run, "delete_everything", {});
    expect(status).toBe(404);
    expect(body.error?.code).toBe("not_found");
    expect(body.error?.recommended_next_action).toBe("use_other_tool");
    expect(body.error?.details?.available_tools).toContain("lookup_order");
  });

  it("charges and traces invalid calls like any other dispatch", async () => {
    const run = await openRun();
    await callTool(run, "lookup_order", {});
    const { body } = await postRaw(run, "not json");
    expect(body.budget?.calls_left).toBe(18);
    const entries = await traceOf(run);
    expect(entries.map((entry) => entry.error_code)).toEqual(["validation_error", "validation_error"]);
  });

  it("refuses an open-run body with unknown or out-of-range fields, field by field", async () => {
    const { status, body } = await request("/v1/runs", {
      method: "POST",
      headers: { authorization: "Bearer acme-demo-key", "content-type": "application/json" },
      body: JSON.stringify({ namespace: "support", limits: { max_calls: 0 }, dry_run: true }),
    });
    expect(status).toBe(422);
    expect(body.error?.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: "limits.max_calls", reason: "must be at least 1" }),
        expect.objectContaining({ field: "dry_run", reason: "unknown field" }),
      ]),
    );
  });
});

describe("arguments from OpenAI strict mode", () => {
  it("treats null for an optional field as absent, and null for a required one as a wrong type", async () => {
    const run = await openRun("acme");
    const withNull = await callTool(run, "draft_customer_email", {
      customer_id: "C100",
      template: "apology",
      order_id: null,
      notes: null,
    });
    expect(withNull.body.outcome).toBe("success");
    const required = await callTool(run, "draft_customer_email", { customer_id: null, template: "apology" });
    expect(required.body.error?.problems?.[0]).toMatchObject({
      field: "customer_id",
      reason: "expected string, got null",
    });
  });
});

describe("arguments that fill the upstream's path", () => {
  it.each([
    ["..", "the segment above"],
    [".", "the same segment"],
  ])("refuses %s as a path argument (it would name %s), and calls nothing", async (value) => {
    const run = await openRun();
    const { status, body } = await callTool(run, "lookup_ticket", { ticket_id: value });
    expect(status).toBe(422);
    expect(body.error?.code).toBe("validation_error");
    expect(body.error?.problems).toEqual([
      {
        field: "ticket_id",
        reason: `${JSON.stringify(value)} cannot fill a URL path: it would name another resource`,
        hint: expect.stringContaining("The ticket id create_internal_ticket returned"),
      },
    ]);
    const trace = await traceOf(run);
    expect(trace).toEqual([
      expect.objectContaining({
        outcome: "terminal_failure",
        error_code: "validation_error",
        upstream_status: null,
      }),
    ]);
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it("sends any other text in its one segment, a slash or a dot run included", async () => {
    const run = await openRun();
    const values = ["../orders", "a/b", "...", "%2e%2e", "?x=1#y"];
    for (const value of values) {
      const { body } = await callTool(run, "lookup_ticket", { ticket_id: value });
      expect(body.error?.code, value).toBe("not_found");
    }
    const paths = (await sandboxRequests(run.id)).map((request) => request.path);
    expect([...new Set(paths)]).toEqual(values.map((value) => `/tickets/${encodeURIComponent(value)}`));
  });
});
