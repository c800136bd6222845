import { describe, expect, it } from "vitest";
import { validateArguments } from "../../src/machine/validate";
import { openRunBodySchema } from "../../src/wire/requests";
import { asOperator, callTool, decide, KEYS, openRun, request } from "./helpers";

/**
 * The JSON routes that are not tool calls validate with @hono/zod-validator and one hook
 * (src/http/validation-hook.ts): every bad input gets field-level problems from the call path's
 * problem builder, in a validation_error envelope with HTTP 422.
 */

const openWith = (body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
  request("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${KEYS.acme}`, ...headers },
    body,
  });

/**
 * Each approval is for its own amount, all of the same order: approving any but the first needs the
 * operator's confirmation that they saw the others (another run's effect on the same order).
 */
let nextAmount = 55;

async function pendingApproval(): Promise<string> {
  const run = await openRun("acme");
  const asked = await callTool(run, "issue_refund", {
    order_id: "A1002",
    amount_cents: nextAmount++,
    reason: "user_cancel",
  });
  const id = asked.body.approval?.id;
  if (!id) throw new Error(`no approval: ${JSON.stringify(asked.body.error)}`);
  return id;
}

describe("POST /v1/runs through the validation hook", () => {
  it("names each field: a near miss with did-you-mean, a wrong type, a value out of range", async () => {
    const { status, body } = await openWith(
      JSON.stringify({ namespce: "support", limits: { max_calls: "ten", deadline_s: 0 } }),
    );
    expect(status).toBe(422);
    expect(body.outcome).toBe("terminal_failure");
    expect(body.error).toMatchObject({
      code: "validation_error",
      message: "The request body is invalid. Fix the fields listed in problems.",
      recommended_next_action: "fix_arguments",
      side_effect_confirmed: false,
    });
    expect(body.error?.problems).toEqual(
      expect.arrayContaining([
        {
          field: "namespce",
          reason: "unknown field",
          hint: 'Did you mean "namespace"? Valid fields: namespace, limits, scenario, tools, task_key.',
        },
        expect.objectContaining({ field: "limits.max_calls", reason: "expected number, got string" }),
        expect.objectContaining({ field: "limits.deadline_s", reason: "must be at least 1" }),
      ]),
    );
  });

  it("gives the same problems as the call path's builder for the same input", async () => {
    const input = { namespace: 7, limits: { max_writes: -1, maxCalls: 3 } };
    const { body } = await openWith(JSON.stringify(input));
    const direct = validateArguments(openRunBodySchema(), input);
    if (direct.ok) throw new Error("expected problems");
    // Only the fallback hint of a field without a description names the route's schema instead.
    expect(body.error?.problems).toEqual(
      direct.problems.map((problem) =>
        problem.hint === "See the tool's input schema."
          ? { ...problem, hint: "See the request schema in the API reference (GET /docs)." }
          : problem,
      ),
    );
    expect(direct.problems.map((problem) => problem.field)).toEqual([
      "namespace",
      "limits.max_writes",
      "limits.maxCalls",
    ]);
  });

  it("quotes the allowed values of an enum field, inside an array", async () => {
    const { status, body } = await openWith(
      JSON.stringify({ namespace: "support", scenario: [{ tool: "lookup_order", mode: "meltdown" }] }),
    );
    expect(status).toBe(422);
    expect(body.error?.problems).toEqual([
      {
        field: "scenario[0].mode",
        reason: '"meltdown" is not an allowed value',
        hint: expect.stringMatching(/^Allowed values: "error_500", .*The fault to inject/),
      },
    ]);
  });

  it("answers a body that is not JSON, or not an object, with one clear problem", async () => {
    const broken = await openWith('{"namespace": "support",');
    expect(broken.status).toBe(422);
    expect(broken.body.error?.problems).toEqual([
      { field: "body", reason: "not valid JSON", hint: "Send a JSON object." },
    ]);
    const list = await openWith("[1, 2]");
    expect(list.status).toBe(422);
    expect(list.body.error?.problems).toEqual([
      { field: "body", reason: "expected a JSON object, got array", hint: "Send a JSON object." },
    ]);
  });

  it("reads the body as JSON whatever its declared type, as the call path does", async () => {
    const plain = await openWith(JSON.stringify({ namespace: "support", limits: { max_calls: 3 } }), {
      "content-type": "text/plain",
    });
    expect(plain.status, JSON.stringify(plain.body.error)).toBe(201);
    expect(plain.body.data).toMatchObject({ limits: { max_calls: 3 } });
    const typo = await openWith(JSON.stringify({ namespace: "support", limit: {} }), {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(typo.status).toBe(422);
    expect(typo.body.error?.problems[0]).toMatchObject({ field: "limit", reason: "unknown field" });
  });

  it("keeps the structural limits in front of the schema", async () => {
    const { status, body } = await openWith(JSON.stringify({ namespace: "support", ["k".repeat(200)]: 1 }));
    expect(status).toBe(422);
    expect(body.error?.message).toContain("input limits");
  });
});

describe("operator decisions through the validation hook", () => {
  it("refuses a misspelt field with did-you-mean and a wrong type, and executes nothing", async () => {
    const id = await pendingApproval();
    const misspelt = await asOperator(`/v1/approvals/${id}/reject`, {
      method: "POST",
      body: JSON.stringify({ reasn: "not covered" }),
    });
    expect(misspelt.status).toBe(422);
    expect(misspelt.body.error?.problems).toEqual([
      expect.objectContaining({ field: "reason", reason: "missing required field" }),
      {
        field: "reasn",
        reason: "unknown field",
        hint: 'Did you mean "reason"? Valid fields: reason, context_digest.',
      },
    ]);
    const wrongType = await asOperator(`/v1/approvals/${id}/approve`, {
      method: "POST",
      body: JSON.stringify({ reason: 42 }),
    });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.error?.problems).toEqual([
      {
        field: "reason",
        reason: "expected string, got integer",
        hint: "Why, in a sentence; shown to the agent on rejection.",
      },
    ]);
    const tooLong = await decide(id, "reject", "x".repeat(501));
    expect(tooLong.body.error?.problems[0]).toMatchObject({
      field: "reason",
      reason: "must be at most 500 characters",
    });
    const still = await asOperator(`/v1/approvals/${id}`);
    expect(still.body.data).toMatchObject({ approval: { state: "pending" } });
  });

  it("takes an empty body or null as no reason, and refuses one that is not JSON", async () => {
    const id = await pendingApproval();
    const broken = await asOperator(`/v1/approvals/${id}/approve`, { method: "POST", body: "{reason" });
    expect(broken.status).toBe(422);
    expect(broken.body.error?.problems).toEqual([
      { field: "body", reason: "not valid JSON", hint: "Send a JSON object." },
    ]);
    const empty = await asOperator(`/v1/approvals/${id}/approve`, {
      method: "POST",
      body: JSON.stringify({ reason: null, confirm_duplicate: true }),
    });
    expect(empty.status, JSON.stringify(empty.body.error)).toBe(200);

    // Without a body there is no confirmation either: the repeat of another run's refund is refused
    // as unconfirmed (a conflict), not as a malformed request.
    const other = await pendingApproval();
    const bare = await asOperator(`/v1/approvals/${other}/approve`, { method: "POST" });
    expect(bare.status, JSON.stringify(bare.body.error)).toBe(409);
    expect(bare.body.error?.details).toMatchObject({ reason: "duplicate_unconfirmed" });
  });

  it("puts the body limits in front of a decision too", async () => {
    const id = await pendingApproval();
    const huge = await decide(id, "reject", "r".repeat(20_000));
    expect(huge.status).toBe(413);
    expect(huge.body.error?.problems[0]).toMatchObject({ field: "body", reason: "too large" });
  });
});

describe("query parameters through the validation hook", () => {
  it("GET /v1/approvals: an unknown state with the allowed values, a misspelt parameter with did-you-mean", async () => {
    const unknown = await asOperator("/v1/approvals?state=maybe");
    expect(unknown.status).toBe(422);
    expect(unknown.body.error?.message).toBe("The query is invalid. Fix the parameters listed in problems.");
    expect(unknown.body.error?.problems).toEqual([
      {
        field: "query.state",
        reason: '"maybe" is not an allowed value',
        hint: expect.stringContaining(
          'Allowed values: "pending", "approved", "executed", "rejected", "expired", "all".',
        ),
      },
    ]);
    const misspelt = await asOperator("/v1/approvals?states=pending");
    expect(misspelt.status).toBe(422);
    expect(misspelt.body.error?.problems).toEqual([
      {
        field: "query.states",
        reason: "unknown field",
        hint: 'Did you mean "state"? Valid fields: state, tool, subject, run_id, since, until, cursor, limit.',
      },
    ]);
    const twice = await asOperator("/v1/approvals?state=pending&state=expired");
    expect(twice.body.error?.problems[0]).toMatchObject({
      field: "query.state",
      reason: '["pending","expired"] is not an allowed value',
    });
  });

  it("GET /v1/tools: a repeated parameter is refused, not read as its last value silently", async () => {
    const { status, body } = await request("/v1/tools?namespace=support&format=openai&format=mcp", {
      headers: { authorization: `Bearer ${KEYS.acme}` },
    });
    expect(status).toBe(422);
    expect(body.error?.problems[0]).toMatchObject({
      field: "query.format",
      reason: '["openai","mcp"] is not an allowed value',
    });
  });

  it("GET /v1/tools: authentication answers before the query is looked at", async () => {
    const { status, body } = await request("/v1/tools?formats=openai");
    expect(status).toBe(401);
    expect(body.error?.code).toBe("permission_error");
  });

  it("GET /v1/runs/{id}/results/{handle}: a cursor that is not a page number, a misspelt parameter", async () => {
    const run = await openRun("acme");
    const page = (query: string) =>
      request(`/v1/runs/${run.id}/results/res_000000000000000000000000${query}`, {
        headers: { authorization: `Bearer ${run.token}` },
      });
    const negative = await page("?cursor=-1");
    expect(negative.status).toBe(422);
    expect(negative.body.error?.problems).toEqual([
      {
        field: "query.cursor",
        reason: "not a non-negative integer",
        hint: "The page to read: 0, then each page's next_cursor.",
      },
    ]);
    const misspelt = await page("?page=2");
    expect(misspelt.body.error?.problems[0]).toMatchObject({ field: "query.page", reason: "unknown field" });
    // A valid cursor passes the hook and reaches the ledger, which knows no such handle.
    expect((await page("?cursor=0")).status).toBe(404);
    expect((await page("")).status).toBe(404);
  });
});
