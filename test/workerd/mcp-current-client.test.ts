import { Client } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { decide, refundsOf } from "./helpers";
import { connect, envelopeOf } from "./mcp-client";

/**
 * The MCP SDK's own client pinned to 2026-07-28 with a static agent key, against the worker: no
 * session, a run opened by `start_task` and named by its run handle on every call, and every
 * guarantee of a run (derived keys and replay, budgets, a human's approval or rejection).
 */

async function pinned(key = "acme-agent-key") {
  const client = new Client(
    { name: "current-client", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const { transport } = await connect(key, { client });
  return { client, transport };
}

async function startTask(client: Client) {
  const started = await client.callTool({ name: "start_task", arguments: {} });
  expect(started.isError).not.toBe(true);
  return started.structuredContent as { run_handle: string; run_id: string; budget: { calls_left: number } };
}

describe("the SDK client on 2026-07-28 with an agent key", () => {
  it("reads, writes with a derived key and replay, and spends the run's budget", async () => {
    const { client, transport } = await pinned();
    expect(transport.sessionId).toBeUndefined();
    const { tools } = await client.listTools();
    expect(tools[0]?.name).toBe("start_task");
    const { run_handle, budget } = await startTask(client);
    expect(budget.calls_left).toBe(60);

    const read = envelopeOf(
      await client.callTool({ name: "lookup_order", arguments: { order_id: "A1001", run_handle } }),
    );
    expect(read.outcome).toBe("success");
    expect(read.budget).toMatchObject({ calls_left: 59 });

    const ticket = {
      customer_id: "C101",
      priority: "low",
      summary: "Asked for a copy of the invoice.",
      run_handle,
    };
    const written = envelopeOf(await client.callTool({ name: "create_internal_ticket", arguments: ticket }));
    expect(written.outcome, JSON.stringify(written.error)).toBe("success");
    const replayed = envelopeOf(await client.callTool({ name: "create_internal_ticket", arguments: ticket }));
    expect(replayed).toMatchObject({ replayed: true, idempotency_key: written.idempotency_key });
    expect(replayed.data).toEqual(written.data);
    await client.close();
  });

  it("a destructive call waits for an operator: approved it runs once, rejected nothing runs", async () => {
    const { client } = await pinned();
    const { run_handle } = await startTask(client);
    const before = (await refundsOf("A1002")).length;
    const args = { order_id: "A1002", amount_cents: 115, reason: "user_cancel", run_handle };
    const asked = envelopeOf(await client.callTool({ name: "issue_refund", arguments: args }));
    expect(asked.error?.code).toBe("approval_required");
    expect((await decide(asked.approval?.id ?? "", "approve", "verified")).status).toBe(200);
    const executed = envelopeOf(await client.callTool({ name: "issue_refund", arguments: args }));
    expect(executed.outcome).toBe("success");
    expect(executed.approval).toMatchObject({ id: asked.approval?.id, state: "executed" });
    expect(await refundsOf("A1002")).toHaveLength(before + 1);

    const other = { ...args, order_id: "A1003", amount_cents: 116 };
    const refusedBefore = (await refundsOf("A1003")).length;
    const waiting = envelopeOf(await client.callTool({ name: "issue_refund", arguments: other }));
    expect((await decide(waiting.approval?.id ?? "", "reject", "not eligible")).status).toBe(200);
    const rejected = envelopeOf(await client.callTool({ name: "issue_refund", arguments: other }));
    expect(rejected.error?.code).toBe("approval_rejected");
    expect(await refundsOf("A1003")).toHaveLength(refusedBefore);
    await client.close();
  });

  it("a call without its run handle is a tool error the model reads", async () => {
    const { client } = await pinned();
    const result = await client.callTool({ name: "lookup_order", arguments: { order_id: "A1001" } });
    expect(result.isError).toBe(true);
    expect(envelopeOf(result).error?.code).toBe("validation_error");
    await client.close();
  });
});
