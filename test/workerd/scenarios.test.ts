import { createExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { FAULT_MODES as SANDBOX_FAULT_MODES } from "../../sandbox/src/model";
import { app } from "../../src/app";
import { envelopeSchema } from "../../src/wire/envelope";
import { FAULT_MODES } from "../../src/wire/scenario";
import {
  callTool,
  KEYS,
  openRun,
  refund,
  refundsOfRun,
  request,
  sandboxRequests,
  type TestRun,
} from "./helpers";

/**
 * Fault scenarios through the proxy: chosen by the orchestrator when it opens a run, or per call by
 * the X-Sandbox-Fault header, forwarded to the sandbox only where FAULT_INJECTION enables it. Each
 * test checks the sandbox's own request log, so "the fault happened" is seen at the source.
 */

function openRunWith(tenant: keyof typeof KEYS, scenario: unknown, limits?: Record<string, number>) {
  return request("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${KEYS[tenant]}`, "content-type": "application/json" },
    body: JSON.stringify({ namespace: "support", scenario, ...(limits ? { limits } : {}) }),
  });
}

async function runWith(tenant: keyof typeof KEYS, scenario: unknown): Promise<TestRun> {
  return openRun(tenant, { namespace: "support", scenario });
}

/** What the sandbox saw of a run: path, status and the fault it was asked for, in order. */
async function seen(run: TestRun) {
  return (await sandboxRequests(run.id)).map(({ method, path, status, fault }) => ({
    method,
    path,
    status,
    fault,
  }));
}

/** The proxy as it runs where FAULT_INJECTION is absent (production): same code, other configuration. */
async function withoutFaultInjection(path: string, init: RequestInit) {
  const production = { ...env, FAULT_INJECTION: undefined };
  const response = await app.fetch(
    new Request(`https://proxy.test${path}`, init),
    production,
    createExecutionContext(),
  );
  return { status: response.status, body: envelopeSchema().parse(await response.json()) };
}

describe("fault modes", () => {
  it("names exactly the sandbox's fault modes", () => {
    expect([...FAULT_MODES].sort()).toEqual([...SANDBOX_FAULT_MODES].sort());
  });
});

describe("a scenario chosen when the run opens", () => {
  it("is stored with the run, defaults filled in, and shown in the run-open answer", async () => {
    const run = await runWith("globex", [
      { mode: "bad_gateway", tool: "issue_refund" },
      { mode: "rate_limited", path_prefix: "/tickets", times: 2, retry_after_s: 3 },
      { mode: "transient_forever", tool: "lookup_order" },
      { mode: "slow_success", tool: "send_customer_email", hang_ms: 6000 },
    ]);
    expect(run.data.scenario).toEqual([
      {
        mode: "bad_gateway",
        tool: "issue_refund",
        path_prefix: null,
        times: 1,
        hang_ms: null,
        retry_after_s: null,
      },
      {
        mode: "rate_limited",
        tool: null,
        path_prefix: "/tickets",
        times: 2,
        hang_ms: null,
        retry_after_s: 3,
      },
      {
        mode: "transient_forever",
        tool: "lookup_order",
        path_prefix: null,
        times: 1000,
        hang_ms: null,
        retry_after_s: 1,
      },
      {
        mode: "slow_success",
        tool: "send_customer_email",
        path_prefix: null,
        times: 1,
        hang_ms: 6000,
        retry_after_s: null,
      },
    ]);
  });

  it("makes the payment API answer 502 once: the retry is the same key and one refund", async () => {
    const run = await runWith("globex", [{ mode: "bad_gateway", tool: "issue_refund" }]);
    const first = await callTool(run, "issue_refund", refund("B2002", 300));
    expect(first.body.outcome).toBe("retryable_failure");
    expect(first.body.error).toMatchObject({ code: "transient_error", side_effect_confirmed: null });
    const second = await callTool(run, "issue_refund", refund("B2002", 300));
    expect(second.body.outcome).toBe("success");
    expect(second.body.idempotency_key).toBe(first.body.idempotency_key);

    expect(await refundsOfRun("B2002", run)).toHaveLength(1);
    const refunds = (await sandboxRequests(run.id)).filter((entry) => entry.path === "/refunds");
    expect(refunds.map(({ status, fault }) => ({ status, fault }))).toEqual([
      { status: 502, fault: "bad_gateway" },
      { status: 201, fault: null },
    ]);
    expect(new Set(refunds.map((entry) => entry.idempotency_key)).size).toBe(1);
  });

  it("spends a step per upstream request: a read the proxy retries gets the fault once", async () => {
    const run = await runWith("acme", [{ mode: "error_500", tool: "lookup_order" }]);
    const read = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(read.body.outcome).toBe("success");
    expect(await seen(run)).toEqual([
      { method: "GET", path: "/orders/A1001", status: 500, fault: "error_500" },
      { method: "GET", path: "/orders/A1001", status: 200, fault: null },
    ]);
  });

  it("waits for a request the mode fits: a silent failure skips the reads before the write", async () => {
    const run = await runWith("globex", [{ mode: "silent_failure" }]);
    await callTool(run, "lookup_order", { order_id: "B2003" });
    const refunded = await callTool(run, "issue_refund", refund("B2003", 400));
    expect(refunded.body.error).toMatchObject({
      code: "silent_failure",
      recommended_next_action: "reconcile",
    });
    expect(await refundsOfRun("B2003", run)).toEqual([]);
    expect(await seen(run)).toEqual([
      { method: "GET", path: "/orders/B2003", status: 200, fault: null },
      { method: "POST", path: "/refunds", status: 201, fault: "silent_failure" },
      // The postcondition read is a request of its own and finds no refund.
      { method: "GET", path: "/orders/B2003", status: 200, fault: null },
    ]);
  });

  it("fires steps in order, each as many times as asked, with the Retry-After it names", async () => {
    const run = await runWith("acme", [
      { mode: "rate_limited", path_prefix: "/tickets", times: 2, retry_after_s: 2 },
      { mode: "partial_success", tool: "create_internal_ticket" },
    ]);
    const ticket = (n: number) => ({ customer_id: "C101", priority: "low", summary: `Scenario ticket ${n}` });
    const limited = await callTool(run, "create_internal_ticket", ticket(1));
    expect(limited.body.error).toMatchObject({ code: "rate_limited", retry_after_ms: 2000 });
    await callTool(run, "create_internal_ticket", ticket(2));
    const partial = await callTool(run, "create_internal_ticket", ticket(3));
    expect(partial.body.error).toMatchObject({ code: "partial_success", side_effect_confirmed: true });
    const plain = await callTool(run, "create_internal_ticket", ticket(4));
    expect(plain.body.outcome).toBe("success");
    expect((await seen(run)).map(({ status, fault }) => [status, fault])).toEqual([
      [429, "rate_limited"],
      [429, "rate_limited"],
      [201, "partial_success"],
      [201, null],
      // The ticket's postcondition read, after the plain success: a request of its own.
      [200, null],
    ]);
  });

  it("plants the injection text in a read when the scenario asks for it, and the run is tainted", async () => {
    const run = await runWith("globex", [{ mode: "injection", tool: "get_customer_profile" }]);
    const profile = await callTool(run, "get_customer_profile", { customer_id: "C201" });
    expect(JSON.stringify(profile.body.data)).toContain("Ignore previous instructions");
    const small = await callTool(run, "issue_refund", refund("B2002", 200));
    // Auto-approved for globex, but not in a run that has read untrusted text.
    expect(small.body.error?.code).toBe("approval_required");
    expect(await refundsOfRun("B2002", run)).toEqual([]);
  });

  it("checks every step field by field and names each problem", async () => {
    const { status, body } = await openRunWith("globex", [
      { mode: "explode", tool: "issue_refund" },
      { mode: "bad_gateway", when: "always" },
      { mode: "stale", tool: "issue_refund" },
      { mode: "bad_gateway", tool: "refund_everything" },
      { mode: "bad_gateway", tool: "issue_refund", path_prefix: "/refunds" },
      { mode: "bad_gateway", hang_ms: 100, retry_after_s: 2 },
      { mode: "hang", times: 0 },
    ]);
    expect(status).toBe(422);
    expect(body.error?.code).toBe("validation_error");
    // The schema's problems come first; the cross-field ones need a well-formed scenario.
    expect(body.error?.problems.map((problem) => [problem.field, problem.reason])).toEqual([
      ["scenario[0].mode", '"explode" is not an allowed value'],
      ["scenario[1].when", "unknown field"],
      ["scenario[6].times", "must be at least 1"],
    ]);

    const crossField = await openRunWith("globex", [
      { mode: "stale", tool: "issue_refund" },
      { mode: "bad_gateway", tool: "refund_everything" },
      { mode: "bad_gateway", tool: "issue_refund", path_prefix: "/refunds" },
      { mode: "bad_gateway", hang_ms: 100, retry_after_s: 2 },
    ]);
    expect(crossField.status).toBe(422);
    expect(crossField.body.error?.problems.map((problem) => [problem.field, problem.reason])).toEqual([
      ["scenario[0].mode", '"stale" cannot apply to issue_refund, a destructive tool'],
      ["scenario[1].tool", '"refund_everything" is not a tool of this namespace'],
      ["scenario[2].path_prefix", "tool and path_prefix are both set"],
      ["scenario[3].hang_ms", '"bad_gateway" does not wait'],
      ["scenario[3].retry_after_s", '"bad_gateway" sends no Retry-After'],
    ]);
  });

  it("cannot be set by the model: a scenario inside a tool's arguments is an unknown field", async () => {
    const run = await openRun("globex");
    const { body } = await callTool(run, "issue_refund", {
      ...refund("B2002", 100),
      scenario: [{ mode: "bad_gateway" }],
    });
    expect(body.error?.code).toBe("validation_error");
    expect(body.error?.problems).toContainEqual(
      expect.objectContaining({ field: "scenario", reason: "unknown field" }),
    );
    expect(await sandboxRequests(run.id)).toEqual([]);
  });
});

describe("the X-Sandbox-Fault header on one call", () => {
  it("is forwarded to that call's first upstream request only", async () => {
    const run = await openRun("acme");
    const read = await callTool(
      run,
      "lookup_order",
      { order_id: "A1002" },
      { "x-sandbox-fault": "bad_gateway" },
    );
    expect(read.body.outcome).toBe("success");
    expect(await seen(run)).toEqual([
      { method: "GET", path: "/orders/A1002", status: 502, fault: "bad_gateway" },
      { method: "GET", path: "/orders/A1002", status: 200, fault: null },
    ]);
  });

  it("reaches the upstream the same way through the MCP door", async () => {
    const run = await openRun("acme");
    const client = new Client({ name: "scenario-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("https://proxy.test/mcp"), {
        fetch: (url, init) => exports.default.fetch(new Request(url, init)),
        requestInit: { headers: { authorization: `Bearer ${run.token}`, "x-sandbox-fault": "bad_gateway" } },
      }),
    );
    const result = await client.callTool({ name: "lookup_order", arguments: { order_id: "A1003" } });
    expect(result.isError).toBeFalsy();
    expect(await seen(run)).toEqual([
      { method: "GET", path: "/orders/A1003", status: 502, fault: "bad_gateway" },
      { method: "GET", path: "/orders/A1003", status: 200, fault: null },
    ]);
  });

  it("forwards the wait numbers it carries, and keeps the call's idempotency key", async () => {
    const run = await openRun("acme");
    const ticket = { customer_id: "C102", priority: "normal", summary: "Header fault ticket" };
    const limited = await callTool(run, "create_internal_ticket", ticket, {
      "x-sandbox-fault": "rate_limited",
      "x-sandbox-fault-retry-after": "4",
    });
    expect(limited.body.error).toMatchObject({ code: "rate_limited", retry_after_ms: 4000 });
    const again = await callTool(run, "create_internal_ticket", ticket);
    expect(again.body.outcome).toBe("success");
    expect(again.body.idempotency_key).toBe(limited.body.idempotency_key);
    const log = await sandboxRequests(run.id);
    expect(log.map(({ method, status, fault }) => [method, status, fault])).toEqual([
      ["POST", 429, "rate_limited"],
      ["POST", 201, null],
      // The ticket's postcondition read: a GET, without a key.
      ["GET", 200, null],
    ]);
    const writes = log.filter((entry) => entry.method === "POST");
    expect(new Set(writes.map((entry) => entry.idempotency_key)).size).toBe(1);
    expect(log.find((entry) => entry.method === "GET")?.idempotency_key).toBeNull();
  });

  it("takes the place of the run's scenario for that request and leaves the step for later", async () => {
    const run = await runWith("acme", [{ mode: "bad_gateway", tool: "lookup_order" }]);
    const stale = await callTool(run, "lookup_order", { order_id: "A1003" }, { "x-sandbox-fault": "stale" });
    expect(stale.body.outcome).toBe("success");
    await callTool(run, "lookup_order", { order_id: "A1004" });
    expect(await seen(run)).toEqual([
      { method: "GET", path: "/orders/A1003", status: 200, fault: "stale" },
      { method: "GET", path: "/orders/A1004", status: 502, fault: "bad_gateway" },
      { method: "GET", path: "/orders/A1004", status: 200, fault: null },
    ]);
  });

  it("is refused before the ledger when malformed or unfit for the tool, at no budget cost", async () => {
    const run = await openRun("acme");
    const cases: Array<[Record<string, string>, string]> = [
      [{ "x-sandbox-fault": "meltdown" }, "X-Sandbox-Fault"],
      [{ "x-sandbox-fault": "bad_gateway", "x-sandbox-fault-hang-ms": "100" }, "X-Sandbox-Fault-Hang-Ms"],
      [{ "x-sandbox-fault": "hang", "x-sandbox-fault-hang-ms": "soon" }, "X-Sandbox-Fault-Hang-Ms"],
      [{ "x-sandbox-fault-retry-after": "3" }, "X-Sandbox-Fault"],
      [{ "x-sandbox-fault": "silent_failure" }, "X-Sandbox-Fault"],
    ];
    for (const [headers, field] of cases) {
      const { status, body } = await callTool(run, "lookup_order", { order_id: "A1001" }, headers);
      expect(status, JSON.stringify(headers)).toBe(422);
      expect(body.error?.code).toBe("validation_error");
      expect(body.error?.problems.map((problem) => problem.field)).toContain(field);
    }
    const status = await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } });
    expect((status.body.data as { used: { calls_used: number } }).used.calls_used).toBe(0);
    expect(await sandboxRequests(run.id)).toEqual([]);
  });
});

describe("where FAULT_INJECTION is absent", () => {
  it("refuses a scenario at run open, so the orchestrator learns it is not in the sandbox", async () => {
    const { status, body } = await withoutFaultInjection("/v1/runs", {
      method: "POST",
      headers: { authorization: `Bearer ${KEYS.globex}`, "content-type": "application/json" },
      body: JSON.stringify({ namespace: "support", scenario: [{ mode: "bad_gateway" }] }),
    });
    expect(status).toBe(422);
    expect(body.error).toMatchObject({
      code: "validation_error",
      problems: [{ field: "scenario", reason: "fault injection is not enabled in this environment" }],
    });
  });

  it("refuses a call carrying X-Sandbox-Fault, and nothing reaches the upstream", async () => {
    const run = await openRun("globex");
    const { status, body } = await withoutFaultInjection(`/v1/runs/${run.id}/calls`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${run.token}`,
        "content-type": "application/json",
        "x-sandbox-fault": "bad_gateway",
      },
      body: JSON.stringify({ tool: "lookup_order", args: { order_id: "B2001" } }),
    });
    expect(status).toBe(422);
    expect(body.error?.problems).toEqual([
      expect.objectContaining({
        field: "X-Sandbox-Fault",
        reason: "fault injection is not enabled in this environment",
      }),
    ]);
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it("still opens runs without a scenario", async () => {
    const { status } = await withoutFaultInjection("/v1/runs", {
      method: "POST",
      headers: { authorization: `Bearer ${KEYS.globex}`, "content-type": "application/json" },
      body: JSON.stringify({ namespace: "support" }),
    });
    expect(status).toBe(201);
  });
});
