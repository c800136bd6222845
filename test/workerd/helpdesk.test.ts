import { afterEach, describe, expect, it, vi } from "vitest";
import { forgetRemoteDefinitions } from "../../src/upstream/mcp-definitions";
import { signedInOperator } from "./console-client";
import { callTool, decide, openRun, request, sandbox, sandboxRequests, type TestRun } from "./helpers";
import { connect, envelopeOf } from "./mcp-client";

/**
 * The helpdesk namespace: tools of a remote MCP server (the sandbox's helpdesk), federated through
 * catalog/helpdesk.yaml, each pinned to its reviewed definition. Proven through the proxy's public
 * interface against what the server itself counts.
 */

const helpdesk = () => openRun("acme", { namespace: "helpdesk" });

async function effectsOf(tool: string): Promise<number> {
  const { count } = await sandbox<{ count: number }>(`/_admin/helpdesk/effects?tenant=acme&tool=${tool}`);
  return count;
}

/** The `tools/call` messages a run's calls made to the server. */
async function remoteCallsOf(run: TestRun): Promise<number> {
  return (await sandboxRequests(run.id)).filter((entry) => entry.path === "/mcp").length;
}

async function drift(tool: string, change: "description" | "annotations" | "input_schema" | "removed") {
  await sandbox("/_admin/helpdesk/drift", {
    method: "POST",
    body: JSON.stringify({ tenant: "acme", tool, change }),
  });
  // The proxy lists again only when its copy is older than the declared maximum: a test cannot wait.
  forgetRemoteDefinitions();
}

afterEach(async () => {
  await sandbox("/_admin/helpdesk/drift?tenant=acme", { method: "DELETE" });
  forgetRemoteDefinitions();
});

describe("helpdesk, a federated MCP server", () => {
  it("reads through the server, fencing the article text a third party wrote, and taints the run", async () => {
    const run = await helpdesk();
    const { status, body } = await callTool(run, "search_articles", { query: "password" });
    expect(status, JSON.stringify(body.error)).toBe(200);
    const results = (body.data as { results: Array<{ article_id: string; snippet: string }> }).results;
    const planted = results.find((result) => result.article_id.endsWith("_password"));
    expect(planted?.snippet).toMatch(/^\[untrusted content [0-9a-f]+: /);
    const { body: runNow } = await request(`/v1/runs/${run.id}`, {
      headers: { authorization: `Bearer ${run.token}` },
    });
    expect((runNow.data as { tainted_by: { tool: string } | null }).tainted_by?.tool).toBe("search_articles");
  });

  it("adds a note once under the derived key, replays the repeat, and reads the note back", async () => {
    const run = await helpdesk();
    const before = await effectsOf("add_ticket_note");
    const args = { ticket_id: "HD-1001", body: `Refund issued (${run.id}).` };
    const first = await callTool(run, "add_ticket_note", args);
    expect(first.status, JSON.stringify(first.body.error)).toBe(200);
    expect(first.body.idempotency_key).toMatch(/^idem_|^[A-Za-z0-9_-]{16,}$/);
    const again = await callTool(run, "add_ticket_note", args);
    expect(again.body.replayed).toBe(true);
    expect(again.body.data).toEqual(first.body.data);
    expect(await effectsOf("add_ticket_note")).toBe(before + 1);
    const { notes } = await sandbox<{ notes: Array<{ idempotency_key: string; run_id: string }> }>(
      `/_admin/helpdesk/notes?tenant=acme&idempotency_key=${encodeURIComponent(String(first.body.idempotency_key))}`,
    );
    expect(notes).toHaveLength(1);
  });

  it("resends a write whose answer was lost under the same key: the server applies it once", async () => {
    const run = await helpdesk();
    const before = await effectsOf("add_ticket_note");
    const args = { ticket_id: "HD-1002", body: `Answer lost on the way (${run.id}).` };
    const lost = await callTool(run, "add_ticket_note", args, { "x-sandbox-fault": "truncated" });
    expect(lost.body.outcome).not.toBe("success");
    expect(lost.body.error?.side_effect_confirmed).toBeNull();
    const retried = await callTool(run, "add_ticket_note", args);
    expect(retried.body.outcome, JSON.stringify(retried.body.error)).toBe("success");
    expect(await effectsOf("add_ticket_note")).toBe(before + 1);
  });

  it("holds a purge for a human, then purges once and reads the conversation back", async () => {
    const run = await helpdesk();
    const args = { conversation_id: "CV-1003", reason: `deletion request (${run.id})` };
    const held = await callTool(run, "purge_conversation", args);
    expect(held.body.error?.code).toBe("approval_required");
    const approvalId = (held.body.approval as { id: string }).id;
    const approved = await decide(approvalId, "approve");
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const after = await callTool(run, "purge_conversation", args);
    expect(after.body.outcome, JSON.stringify(after.body.error)).toBe("success");
    expect((after.body.data as { status: string }).status).toBe("purged");
    expect(await effectsOf("purge_conversation")).toBeGreaterThanOrEqual(1);
  });

  it.each([
    ["a changed description", "search_articles", "description", { query: "password" }],
    ["a changed input schema", "get_ticket_notes", "input_schema", { ticket_id: "HD-1001" }],
    ["an annotation flipped", "get_conversation", "annotations", { conversation_id: "CV-1001" }],
    ["a removed tool", "add_ticket_note", "removed", { ticket_id: "HD-1001", body: "never sent" }],
  ] as const)(
    "refuses %s without calling the tool, and serves it again once it is back",
    async (_what, tool, change, args) => {
      const run = await helpdesk();
      const effects = await effectsOf(tool);
      await drift(tool, change);
      const { status, body } = await callTool(run, tool, args);
      expect(status).toBe(502);
      expect(body.error?.code).toBe("upstream_changed");
      expect(body.error?.details).toMatchObject({
        drift: change === "removed" ? "vanished" : "changed",
        remote_tool: tool,
      });
      expect(body.error?.side_effect_confirmed).toBe(false);
      expect(await effectsOf(tool)).toBe(effects);
      const calls = (await sandboxRequests(run.id)).filter((entry) => entry.path === "/mcp");
      // Only listings reached the server, never the tool.
      expect(calls.every((entry) => entry.idempotency_key === null)).toBe(true);

      // The server publishes the reviewed definition again: the pin holds, the tool is served.
      await sandbox("/_admin/helpdesk/drift?tenant=acme", { method: "DELETE" });
      forgetRemoteDefinitions();
      const restored = await callTool(await helpdesk(), tool, args);
      expect(restored.body.outcome, JSON.stringify(restored.body.error)).toBe("success");
    },
  );

  it("refuses an approved purge whose tool turned read-only on the server, without calling it", async () => {
    const run = await helpdesk();
    const effects = await effectsOf("purge_conversation");
    const args = { conversation_id: "CV-1002", reason: `deletion request (${run.id})` };
    const held = await callTool(run, "purge_conversation", args);
    expect(held.body.error?.code).toBe("approval_required");
    // The server now claims the tool only reads: its meaning changed after the human was asked.
    await drift("purge_conversation", "annotations");
    await decide((held.body.approval as { id: string }).id, "approve");
    const { body } = await callTool(run, "purge_conversation", args);
    expect(body.error?.code).toBe("upstream_changed");
    expect(await effectsOf("purge_conversation")).toBe(effects);
  });

  it("tells a remote tool's own error as ours: an unknown ticket is not_found, with nothing done", async () => {
    const run = await helpdesk();
    const read = await callTool(run, "get_ticket_notes", { ticket_id: "HD-9999" });
    expect(read.body.error).toMatchObject({
      code: "not_found",
      side_effect_confirmed: false,
      recommended_next_action: "fix_arguments",
      details: { remote_code: "not_found" },
    });
    // The server's message is never passed on: only its well-formed code.
    expect(JSON.stringify(read.body)).not.toContain("HD-9999 does not exist");
    const effects = await effectsOf("add_ticket_note");
    const write = await callTool(run, "add_ticket_note", { ticket_id: "HD-9999", body: "nowhere" });
    expect(write.body.error?.code).toBe("not_found");
    expect(await effectsOf("add_ticket_note")).toBe(effects);
  });

  it("shows the operator the drift on the health page, with the commands that review and re-pin it", async () => {
    const run = await helpdesk();
    await drift("get_conversation", "description");
    const { body } = await callTool(run, "get_conversation", { conversation_id: "CV-1001" });
    expect(body.error?.code).toBe("upstream_changed");
    const operator = await signedInOperator("acme");
    const page = await vi.waitFor(
      async () => {
        const { html } = await operator.get("/console/health");
        expect(html).toContain("<code>upstream_changed</code>");
        return html;
      },
      { timeout: 15_000, interval: 250 },
    );
    expect(page).toContain("npm run tools -- check --remote --namespace helpdesk");
    expect(page).toContain("npm run tools -- pin helpdesk");
  });

  it("spends the run's write budget on remote writes and refuses past it, sending nothing", async () => {
    const run = await openRun("acme", { namespace: "helpdesk", limits: { max_writes: 1 } });
    const before = await effectsOf("add_ticket_note");
    const first = await callTool(run, "add_ticket_note", { ticket_id: "HD-1001", body: `one (${run.id})` });
    expect(first.body.outcome).toBe("success");
    const second = await callTool(run, "add_ticket_note", { ticket_id: "HD-1001", body: `two (${run.id})` });
    expect(second.body.error?.code).toBe("budget_exhausted");
    expect(await effectsOf("add_ticket_note")).toBe(before + 1);
  });

  it("writes and holds a purge for a human through the proxy's own MCP door as through REST", async () => {
    const run = await helpdesk();
    const before = await effectsOf("add_ticket_note");
    const { client } = await connect(run.token);
    const args = { ticket_id: "HD-1002", body: `over MCP (${run.id})` };
    const first = envelopeOf(await client.callTool({ name: "add_ticket_note", arguments: args }));
    expect(first.outcome).toBe("success");
    const again = envelopeOf(await client.callTool({ name: "add_ticket_note", arguments: args }));
    expect(again.replayed).toBe(true);
    expect(await effectsOf("add_ticket_note")).toBe(before + 1);
    const held = envelopeOf(
      await client.callTool({
        name: "purge_conversation",
        arguments: { conversation_id: "CV-1001", reason: "r" },
      }),
    );
    expect(held.error?.code).toBe("approval_required");
    await client.close();
  });

  it("answers the same tools over the proxy's own MCP door", async () => {
    const run = await helpdesk();
    const { client } = await connect(run.token);
    const listed = await client.listTools();
    expect(listed.tools.map((tool) => tool.name)).toContain("add_ticket_note");
    const result = await client.callTool({
      name: "get_ticket_notes",
      arguments: { ticket_id: "HD-1001" },
    });
    expect(envelopeOf(result).outcome).toBe("success");
    await client.close();
    expect(await remoteCallsOf(run)).toBeGreaterThan(0);
  });
});
