import { describe, expect, it } from "vitest";
import { decide, refundsOf } from "./helpers";
import { connect, envelopeOf } from "./mcp-client";

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
    expect(result.approval).toMatchObject({ id, state: "executed" });
    expect(await refundsOf("A1004")).toHaveLength(before + 1);
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
