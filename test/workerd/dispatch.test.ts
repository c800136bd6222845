import { describe, expect, it } from "vitest";
import { armFault, callTool, openRun, sandboxRequests, traceOf } from "./helpers";

describe("dispatch through the environment's binding", () => {
  it("returns the order from the sandbox, shaped by the output whitelist", async () => {
    const run = await openRun();
    const { status, body } = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      outcome: "success",
      tool: "lookup_order",
      environment: "sandbox",
      error: null,
    });
    const order = body.data as Record<string, unknown>;
    expect(order.order_id).toBe("A1001");
    expect(Array.isArray(order.refunds)).toBe(true);
    expect(order).not.toHaveProperty("internal_notes");
    expect(order).not.toHaveProperty("warehouse_id");
    expect(body.idempotency_key).toBeNull();
  });

  it("sends a per-run credential upstream and records the call at the source", async () => {
    const run = await openRun();
    await callTool(run, "lookup_order", { order_id: "A1002" });
    const requests = await sandboxRequests(run.id);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      run_id: run.id,
      tool: "lookup_order",
      method: "GET",
      path: "/orders/A1002",
    });
  });

  it("sends a server-derived Idempotency-Key with writes, never with reads", async () => {
    const run = await openRun();
    const { body } = await callTool(run, "create_internal_ticket", {
      customer_id: "C100",
      priority: "normal",
      summary: "Customer asks about a late delivery.",
    });
    expect(body.outcome).toBe("success");
    expect(body.idempotency_key).toMatch(/^idk_[0-9a-f]{64}$/);
    const requests = await sandboxRequests(run.id);
    expect(requests[0]?.idempotency_key).toBe(body.idempotency_key);
  });

  it("hides an upstream 500's stack trace, SQL and hostname from the agent", async () => {
    const run = await openRun();
    await armFault(run.id, { mode: "error_500", times: 5 });
    const { status, body } = await callTool(run, "lookup_order", { order_id: "A1001" });
    const text = JSON.stringify(body);
    expect(status).toBe(503);
    expect(body.outcome).toBe("retryable_failure");
    expect(body.error?.code).toBe("transient_error");
    expect(text).not.toMatch(/corp\.local|SELECT|at [A-Za-z]+ \(|stack|\.ts:\d+/i);
  });

  it("classifies an HTML answer as a terminal failure without passing the HTML on", async () => {
    const run = await openRun();
    await armFault(run.id, { mode: "html" });
    const { body } = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(body.outcome).toBe("terminal_failure");
    expect(body.error?.code).toBe("terminal_error");
    expect(JSON.stringify(body)).not.toMatch(/<html|<body/i);
  });

  it("retries a read on a transient 502 inside the proxy and shows both attempts in the trace", async () => {
    const run = await openRun();
    await armFault(run.id, { mode: "bad_gateway", times: 1 });
    const { body } = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(body.outcome).toBe("success");
    expect(body.budget?.calls_left).toBe(19);
    const [entry] = await traceOf(run);
    expect(
      ((entry?.upstream_attempts ?? []) as Array<{ upstream_status: number }>).map(
        (attempt) => attempt.upstream_status,
      ),
    ).toEqual([502, 200]);
  });

  it("honours Retry-After on a 429 for reads", async () => {
    const run = await openRun();
    await armFault(run.id, { mode: "rate_limited", retry_after_s: 1, times: 1 });
    const started = Date.now();
    const { body } = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(body.outcome).toBe("success");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it("never retries a write on its own: a 502 comes back as retryable with the effect unknown", async () => {
    const run = await openRun();
    await armFault(run.id, { mode: "bad_gateway", times: 1 });
    const { body } = await callTool(run, "create_internal_ticket", {
      customer_id: "C101",
      priority: "low",
      summary: "Please call the customer back tomorrow.",
    });
    expect(body.outcome).toBe("retryable_failure");
    expect(body.error?.side_effect_confirmed).toBeNull();
    expect((await sandboxRequests(run.id)).length).toBe(1);
  });

  it("maps an upstream 404 to not_found", async () => {
    const run = await openRun();
    const { status, body } = await callTool(run, "lookup_order", { order_id: "A9999" });
    expect(status).toBe(404);
    expect(body.error?.code).toBe("not_found");
  });
});
