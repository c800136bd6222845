import type { Client } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { forgetRemoteDefinitions } from "../../src/upstream/mcp-definitions";
import { decide, openRun, refundsOf, sandbox } from "./helpers";
import { connect, envelopeOf, textOf } from "./mcp-client";

/**
 * Calls `name` with a progress token and resolves, once the proxy says the call waits for a human,
 * with the approval's id and the call's eventual answer.
 */
async function waitingCall(client: Client, name: string, args: Record<string, unknown>) {
  let told: (message: string) => void = () => {};
  const toldOfApproval = new Promise<string>((resolve) => {
    told = resolve;
  });
  const answered = client.callTool(
    { name, arguments: args },
    { onprogress: (update) => told(update.message ?? "") },
  );
  const id = /Approval (apr_\w+)/.exec(await toldOfApproval)?.[1] ?? "";
  expect(id).toMatch(/^apr_/);
  return { id, answered };
}

afterEach(async () => {
  await sandbox("/_admin/helpdesk/drift?tenant=acme", { method: "DELETE" });
  forgetRemoteDefinitions();
});

/**
 * A client of the 2025 revisions that sends a progress token waits for a pending approval's
 * decision in the same request: it is told which approval it waits for, then gets the executed
 * result as soon as an operator approves, instead of polling.
 */
describe("a tools/call with a progress token", () => {
  it("waits for the approval's decision, with a progress notification naming it, and answers the executed call", async () => {
    const { client } = await connect("acme-agent-key");
    // The session's run opens at its first call.
    expect(
      (await client.callTool({ name: "lookup_order", arguments: { order_id: "A1004" } })).isError,
    ).not.toBe(true);
    const before = (await refundsOf("A1004")).length;
    const progress: string[] = [];
    let told: () => void = () => {};
    const toldOfApproval = new Promise<void>((resolve) => {
      told = resolve;
    });
    const answered = client.callTool(
      { name: "issue_refund", arguments: { order_id: "A1004", amount_cents: 141, reason: "user_cancel" } },
      {
        onprogress: (update) => {
          progress.push(update.message ?? "");
          told();
        },
      },
    );
    await toldOfApproval;
    const id = /Approval (apr_\w+)/.exec(progress[0] ?? "")?.[1] ?? "";
    expect(progress[0]).toContain("waiting for a human");
    expect((await decide(id, "approve", "ok", "acme", { confirm_duplicate: true })).status).toBe(200);
    const result = envelopeOf(await answered);
    expect(result.outcome, JSON.stringify(result.error)).toBe("success");
    expect(result.approval).toMatchObject({ id, state: "executed", execution: "executed" });
    expect(textOf(await answered)).toContain(`Approval ${id} was granted and the call executed.`);
    expect(await refundsOf("A1004")).toHaveLength(before + 1);
    await client.close();
  });

  it("answers an approved call the upstream refused as refused, never as executed", async () => {
    const { client } = await connect("acme-agent-key");
    await client.callTool({ name: "lookup_order", arguments: { order_id: "A1005" } });
    // A1005 is cancelled: the payments API refuses any refund of it, having done nothing.
    const before = (await refundsOf("A1005")).length;
    const args = { order_id: "A1005", amount_cents: 100, reason: "user_cancel" };
    const { id, answered } = await waitingCall(client, "issue_refund", args);
    expect((await decide(id, "approve", "ok", "acme", { confirm_duplicate: true })).status).toBe(502);
    const result = await answered;
    expect(result.isError).toBe(true);
    expect(envelopeOf(result).approval).toMatchObject({ id, state: "executed", execution: "refused" });
    const told = `Approval ${id} was granted, but the upstream refused the call: it did not take effect.`;
    expect(textOf(result)).toContain(told);
    expect(textOf(result)).not.toMatch(/call executed|succeeded/);
    // The identical call again is answered with what happened, in the same words.
    const again = await client.callTool({ name: "issue_refund", arguments: args });
    expect(textOf(again)).toContain(told);
    expect(envelopeOf(again).approval).toMatchObject({ execution: "refused" });
    expect(await refundsOf("A1005")).toHaveLength(before);
    await client.close();
  });

  it("answers an approved remote call refused as drifted before it was sent as not sent", async () => {
    const run = await openRun("acme", { namespace: "helpdesk" });
    const { client } = await connect(run.token);
    const args = { conversation_id: "CV-1003", reason: `deletion request (${run.id})` };
    const { id, answered } = await waitingCall(client, "purge_conversation", args);
    await sandbox("/_admin/helpdesk/drift", {
      method: "POST",
      body: JSON.stringify({ tenant: "acme", tool: "purge_conversation", change: "annotations" }),
    });
    forgetRemoteDefinitions();
    expect((await decide(id, "approve")).status).toBe(502);
    const result = await answered;
    expect(envelopeOf(result).error?.code).toBe("upstream_changed");
    expect(envelopeOf(result).approval).toMatchObject({ id, execution: "not_sent" });
    expect(textOf(result)).toContain(
      `Approval ${id} was granted, but the call was not sent: nothing was done.`,
    );
    expect(textOf(result)).not.toContain("call executed");
    await client.close();
  });

  it("answers at once, with no progress, when the call needs no human", async () => {
    const { client } = await connect("acme-agent-key");
    const updates: unknown[] = [];
    const read = await client.callTool(
      { name: "lookup_order", arguments: { order_id: "A1001" } },
      { onprogress: (update) => updates.push(update) },
    );
    expect(envelopeOf(read).outcome).toBe("success");
    expect(updates).toEqual([]);
    await client.close();
  });
});
