import { describe, expect, it } from "vitest";
import { callTool, openRun, sandbox, sandboxRequests, type TestRun } from "../helpers";

/**
 * A remote MCP server that does not honour idempotency keys (here: the helpdesk reached with its key
 * where it does not look, declared `honoured: false` by this project's catalog). A write whose
 * outcome is unknown is never sent again, however often the agent repeats it; the doubt is
 * answered, and the server's own count of effects shows the note added once.
 */

async function notesAdded(): Promise<number> {
  const { count } = await sandbox<{ count: number }>(
    "/_admin/helpdesk/effects?tenant=acme&tool=add_ticket_note",
  );
  return count;
}

const posts = async (run: TestRun) =>
  (await sandboxRequests(run.id)).filter((entry) => entry.path === "/mcp" && entry.method === "POST").length;

describe("a remote write on a server that ignores keys", () => {
  it("is never resent once in doubt: the doubt is answered, and the note exists once", async () => {
    const run = await openRun("acme", { namespace: "helpdesk" });
    const before = await notesAdded();
    const args = { ticket_id: "HD-1001", body: `Answer lost, key ignored (${run.id}).` };
    const lost = await callTool(run, "add_ticket_note", args, { "x-sandbox-fault": "truncated" });
    expect(lost.body.outcome).toBe("terminal_failure");
    expect(lost.body.error?.side_effect_confirmed).toBeNull();
    expect(lost.body.error?.recommended_next_action).toBe("reconcile");
    expect(lost.body.error?.message).toContain("will not send this call again");
    expect(lost.body.error?.message).toContain("get_ticket_notes");
    expect(await notesAdded()).toBe(before + 1);
    const sent = await posts(run);

    const again = await callTool(run, "add_ticket_note", args);
    expect(again.body.outcome).toBe("terminal_failure");
    expect(again.body.error?.side_effect_confirmed).toBeNull();
    expect(again.body.replayed).toBe(true);
    // A third identical call meets the repeat breaker; nothing is sent either way.
    const third = await callTool(run, "add_ticket_note", args);
    expect(third.body.error?.code).toBe("repeat_detected");
    expect(await posts(run)).toBe(sent);
    expect(await notesAdded()).toBe(before + 1);
  });
});

describe("a remote result that does not meet the declared output", () => {
  it("is withheld as a failure of the tool's contract, never passed on and never a crash", async () => {
    const run = await openRun("acme", { namespace: "helpdesk" });
    const { status, body } = await callTool(run, "get_conversation", { conversation_id: "CV-1001" });
    expect(status).toBe(502);
    expect(body.data).toBeNull();
    expect(body.error).toMatchObject({ code: "terminal_error", side_effect_confirmed: false });
    expect(body.error?.message).toContain("does not match this tool's output contract");
  });
});
