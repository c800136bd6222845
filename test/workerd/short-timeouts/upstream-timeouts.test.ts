import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../../../src/catalog/define-tool";
import { catalog } from "../../../src/tools";
import { MAX_UPSTREAM_ATTEMPTS } from "../../../src/upstream/retry";
import { armFault, callTool, openRun, runOutIdempotencyLease, sandbox, sandboxRequests } from "../helpers";

/**
 * Upstreams that hang past a tool's timeout, against the test catalog (./catalog.ts) so the
 * timeout passes in a moment. The sandbox's request log is the evidence of what was cancelled.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const timeoutOf = (tool: string) => (catalog.find("support", tool) as ToolSpec).timeout_ms;

describe("dispatch through the environment's binding", () => {
  it("times out each attempt of a hanging read at the tool's limit, retries it, and really aborts every request", async () => {
    const timeout = timeoutOf("lookup_order");
    const hang = timeout + 400;
    const run = await openRun();
    await armFault(run.id, { mode: "hang", hang_ms: hang, times: MAX_UPSTREAM_ATTEMPTS });
    const started = Date.now();
    const { status, body } = await callTool(run, "lookup_order", { order_id: "A1001" });
    const elapsed = Date.now() - started;
    expect(status).toBe(504);
    expect(body.error?.code).toBe("timeout");
    expect(body.outcome).toBe("retryable_failure");
    expect(body.error?.details?.attempts).toBe(MAX_UPSTREAM_ATTEMPTS);
    expect(elapsed).toBeGreaterThanOrEqual(MAX_UPSTREAM_ATTEMPTS * timeout - 100);
    // Past the hang the sandbox would have recorded completion, had the request not been cancelled.
    await sleep(Math.max(0, started + hang + 250 - Date.now()));
    const requests = await sandboxRequests(run.id);
    expect(requests.filter((entry) => entry.fault === "hang").map((entry) => entry.phase)).toEqual(
      Array(MAX_UPSTREAM_ATTEMPTS).fill("started"),
    );
  });

  it("answers a read whose first attempt hung with the second attempt's data", async () => {
    const timeout = timeoutOf("lookup_order");
    const run = await openRun();
    await armFault(run.id, { mode: "hang", hang_ms: timeout + 400, times: 1 });
    const { status, body } = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(status).toBe(200);
    expect(body.outcome).toBe("success");
    const requests = await sandboxRequests(run.id);
    expect(requests.filter((entry) => entry.fault === "hang").map((entry) => entry.phase)).toEqual([
      "started",
    ]);
  });

  it("sends a hanging write once: its strict timeout ends the call, and nothing is resent blindly", async () => {
    const run = await openRun("initech");
    const hang = timeoutOf("create_internal_ticket") + 400;
    await armFault(run.id, { mode: "hang", path_prefix: "/tickets", hang_ms: hang, times: 3 });
    const { body } = await callTool(run, "create_internal_ticket", {
      customer_id: "C303",
      priority: "low",
      summary: "A write that hangs is sent once, never retried by the proxy.",
    });
    expect(body.error?.code).toBe("timeout");
    const requests = await sandboxRequests(run.id);
    expect(requests.filter((entry) => entry.fault === "hang").map((entry) => entry.phase)).toEqual([
      "started",
    ]);
  });
});

describe("idempotency with server-derived keys", () => {
  it("resends a timed-out write with the same key, and the effect happens once", async () => {
    // initech's loose repeat breaker lets the test retry until the upstream releases the key.
    const run = await openRun("initech");
    await armFault(run.id, { mode: "hang", path_prefix: "/tickets", hang_ms: 6_000 });
    const args = {
      customer_id: "C303",
      priority: "high",
      summary: "Customer reports a charge they did not make.",
    };
    const first = await callTool(run, "create_internal_ticket", args);
    expect(first.body.error?.code).toBe("timeout");
    expect(first.body.error?.side_effect_confirmed).toBeNull();

    // The upstream holds the abandoned request's key until its lease lapses; the lease is run out
    // (its stored clock passes it) before each resend instead of waited for.
    let answer = first;
    for (let attempt = 0; attempt < 6 && answer.body.outcome !== "success"; attempt++) {
      if (attempt > 0) await sleep(200);
      await runOutIdempotencyLease(run.tenant, first.body.idempotency_key ?? "");
      answer = await callTool(run, "create_internal_ticket", args);
    }
    expect(answer.body.outcome).toBe("success");
    expect(answer.body.idempotency_key).toBe(first.body.idempotency_key);
    const tickets = (await sandbox<{ tickets: Array<{ run_id: string }> }>("/_admin/tickets?tenant=initech"))
      .tickets;
    expect(tickets.filter((ticket) => ticket.run_id === run.id)).toHaveLength(1);
    // Every write attempt carries the one key; the postcondition's read (a GET) carries none.
    const keys = (await sandboxRequests(run.id))
      .filter((request) => request.method === "POST")
      .map((request) => request.idempotency_key);
    expect(new Set(keys)).toEqual(new Set([first.body.idempotency_key]));
  });
});
