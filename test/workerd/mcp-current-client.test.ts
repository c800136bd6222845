import { Client } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import type { Envelope } from "../../src/wire/envelope";
import { decide, refundsOf } from "./helpers";
import { connect, envelopeOf, textOf } from "./mcp-client";

/**
 * The MCP SDK's own client with a static agent key, against the worker, twice: pinned to
 * 2026-07-28 (no session; a run opened by `start_task` and named by its run handle on every call)
 * and on 2025-11-25 (the session is the run). Both pass the same end-to-end tests: derived keys and
 * replay, budgets, fencing, a human's approval or rejection.
 */

interface Era {
  name: string;
  /** Keeps the two eras' effects apart: one file's tests share their storage. */
  cents: number;
  connect: (key?: string) => Promise<{ client: Client; sessionId: string | undefined }>;
  /** The arguments that name the run: a run handle on 2026-07-28, nothing where the session is the run. */
  startTask: (client: Client) => Promise<{ run_handle?: string; calls_left: number }>;
}

const current: Era = {
  name: "2026-07-28",
  cents: 115,
  async connect(key = "acme-agent-key") {
    const client = new Client(
      { name: "current-client", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    const { transport } = await connect(key, { client });
    return { client, sessionId: transport.sessionId };
  },
  async startTask(client) {
    const started = await client.callTool({ name: "start_task", arguments: {} });
    expect(started.isError).not.toBe(true);
    const data = started.structuredContent as { run_handle: string; budget: { calls_left: number } };
    return { run_handle: data.run_handle, calls_left: data.budget.calls_left };
  },
};

const legacy: Era = {
  name: "2025-11-25",
  cents: 125,
  async connect(key = "acme-agent-key") {
    const { client, transport } = await connect(key);
    return { client, sessionId: transport.sessionId };
  },
  async startTask() {
    return { calls_left: 60 };
  },
};

/** The other era's run refunded the same orders: where the answer names it, the operator confirms it saw it. */
function seen(asked: Envelope): { confirm_duplicate?: boolean } {
  return asked.error?.details && "earlier_effects" in asked.error.details ? { confirm_duplicate: true } : {};
}

describe.each([current, legacy])("the SDK client on $name with an agent key", (era) => {
  const withRun = (args: Record<string, unknown>, run: { run_handle?: string }) =>
    run.run_handle === undefined ? args : { ...args, run_handle: run.run_handle };

  it("reads, writes with a derived key and replay, and spends the run's budget", async () => {
    const { client, sessionId } = await era.connect();
    if (era === current) expect(sessionId).toBeUndefined();
    else expect(sessionId).toMatch(/^ms1\./);
    const { tools } = await client.listTools();
    expect(tools.some((tool) => tool.name === "lookup_order")).toBe(true);
    const run = await era.startTask(client);
    expect(run.calls_left).toBe(60);

    const readResult = await client.callTool({
      name: "lookup_order",
      arguments: withRun({ order_id: "A1001" }, run),
    });
    const read = envelopeOf(readResult);
    expect(read.outcome).toBe("success");
    expect(read.budget).toMatchObject({ calls_left: 59 });
    // A client that passes the model only `content` still tells it the budget left.
    expect(textOf(readResult)).toMatch(
      /^lookup_order succeeded\. Budget left: 59 calls, \d+ writes?, \d+ destructive actions?, .+ until the run's deadline\. Result: \{"order_id":"A1001"/,
    );

    const ticket = withRun(
      { customer_id: "C101", priority: "low", summary: `Asked for a copy of the invoice (${era.name}).` },
      run,
    );
    const written = envelopeOf(await client.callTool({ name: "create_internal_ticket", arguments: ticket }));
    expect(written.outcome, JSON.stringify(written.error)).toBe("success");
    const replayed = envelopeOf(await client.callTool({ name: "create_internal_ticket", arguments: ticket }));
    expect(replayed).toMatchObject({ replayed: true, idempotency_key: written.idempotency_key });
    expect(replayed.data).toEqual(written.data);

    // A customer's words reach the model fenced, as text that is never instructions.
    const profile = envelopeOf(
      await client.callTool({
        name: "get_customer_profile",
        arguments: withRun({ customer_id: "C100" }, run),
      }),
    );
    const messages = (profile.data as { recent_messages: Array<{ body: string }> }).recent_messages;
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) expect(message.body).toMatch(/^\[untrusted content [0-9a-f]{12}: /);
    // and the run is tainted: its next write waits for a human.
    const after = envelopeOf(
      await client.callTool({ name: "create_internal_ticket", arguments: { ...ticket, priority: "high" } }),
    );
    expect(after.error?.code).toBe("approval_required");
    expect(after.error?.message).toContain("untrusted content");
    await client.close();
  });

  it("a destructive call waits for an operator: approved it runs once, rejected nothing runs", async () => {
    const { client } = await era.connect();
    const run = await era.startTask(client);
    const before = (await refundsOf("A1002")).length;
    const args = withRun({ order_id: "A1002", amount_cents: era.cents, reason: "user_cancel" }, run);
    // Read as a model whose client passes on only `content`: a missing enum reads as missing, with
    // the values it may take, and the approval wait names the approval, its expiry and when to call again.
    const { reason: _left, ...noReason } = args;
    const unfinished = await client.callTool({ name: "issue_refund", arguments: noReason });
    expect(unfinished.isError).toBe(true);
    expect(textOf(unfinished)).toContain(
      'reason: missing required field (Allowed values: "user_cancel", "out_of_stock", "price_error".',
    );
    expect(textOf(unfinished)).toContain("Next: fix_arguments.");
    const askedResult = await client.callTool({ name: "issue_refund", arguments: args });
    const asked = envelopeOf(askedResult);
    expect(asked.error?.code).toBe("approval_required");
    expect(textOf(askedResult)).toContain(
      `Approval ${asked.approval?.id} is waiting for a human; it expires at ${asked.approval?.expires_at}; call again in 30 s with the same arguments.`,
    );
    expect(asked.approval?.id).toMatch(/^apr_/);
    // The budget left, as the envelope has it; no destructive action was spent yet.
    expect(asked.budget?.destructive_left).toBe(2);
    expect(textOf(askedResult)).toContain(
      `Budget left: ${asked.budget?.calls_left} calls, ${asked.budget?.writes_left} writes, 2 destructive actions, `,
    );
    expect((await decide(asked.approval?.id ?? "", "approve", "verified", "acme", seen(asked))).status).toBe(
      200,
    );
    const executed = envelopeOf(await client.callTool({ name: "issue_refund", arguments: args }));
    expect(executed.outcome).toBe("success");
    expect(executed.approval).toMatchObject({ id: asked.approval?.id, state: "executed" });
    expect(await refundsOf("A1002")).toHaveLength(before + 1);

    const other = { ...args, order_id: "A1003", amount_cents: era.cents + 1 };
    const refusedBefore = (await refundsOf("A1003")).length;
    const waiting = envelopeOf(await client.callTool({ name: "issue_refund", arguments: other }));
    expect(
      (await decide(waiting.approval?.id ?? "", "reject", "not eligible", "acme", seen(waiting))).status,
    ).toBe(200);
    const rejected = envelopeOf(await client.callTool({ name: "issue_refund", arguments: other }));
    expect(rejected.error?.code).toBe("approval_rejected");
    expect(await refundsOf("A1003")).toHaveLength(refusedBefore);
    await client.close();
  });

  it("an operator's edit: the edited call runs once, and the model reads what was approved instead", async () => {
    const { client } = await era.connect();
    const run = await era.startTask(client);
    const before = (await refundsOf("A1004")).length;
    const args = withRun({ order_id: "A1004", amount_cents: era.cents + 2, reason: "user_cancel" }, run);
    const asked = envelopeOf(await client.callTool({ name: "issue_refund", arguments: args }));
    expect(asked.error?.code).toBe("approval_required");
    const edited = { order_id: "A1004", amount_cents: era.cents, reason: "user_cancel" };
    const approved = await decide(asked.approval?.id ?? "", "approve", "less", "acme", {
      ...seen(asked),
      args: edited,
    });
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);
    const result = await client.callTool({ name: "issue_refund", arguments: args });
    const resent = envelopeOf(result);
    expect(resent).toMatchObject({ outcome: "success", replayed: true, data: { amount_cents: era.cents } });
    expect(resent.approval?.edit).toMatchObject({ fields: ["amount_cents"], approved_args: edited });
    const text = (result.content as Array<{ text: string }>)[0]?.text ?? "";
    expect(text).toContain(`amount_cents ${era.cents + 2} → ${era.cents}`);
    expect(text).toContain("never run");
    const made = (await refundsOf("A1004")).slice(before);
    expect(made.map((refund) => refund.amount_cents)).toEqual([era.cents]);
    await client.close();
  });
});

describe("the SDK client on 2026-07-28 without a session", () => {
  it("lists start_task first", async () => {
    const { client } = await current.connect();
    const { tools } = await client.listTools();
    expect(tools[0]?.name).toBe("start_task");
    await client.close();
  });

  it("a call without its run handle is a tool error the model reads", async () => {
    const { client } = await current.connect();
    const result = await client.callTool({ name: "lookup_order", arguments: { order_id: "A1001" } });
    expect(result.isError).toBe(true);
    expect(envelopeOf(result).error?.code).toBe("validation_error");
    expect(textOf(result)).toContain("run_handle: missing required field");
    await client.close();
  });
});
