import { afterEach, describe, expect, it } from "vitest";
import { ageRemoteDefinitions, forgetRemoteDefinitions } from "../../../src/upstream/mcp-definitions";
import { callTool, openRun, sandbox } from "../helpers";
import { SHORT_RELIST_WINDOW_MS } from "./catalog";

/**
 * How soon a remote tool whose definition changed is refused. The proxy trusts a listing for at most
 * its upstream's `definitions_max_age_s` (60 s unless declared otherwise), and less when the server
 * says its tools changed: a 2025 session's server (the sandbox's helpdesk over sessions, catalog.ts)
 * tells it on its next tool call's stream, and the proxy refuses the tool from the next call on,
 * without waiting for its listing to age.
 */

const TOOL = "get_ticket_notes_2025";
// Two tickets in turn: the same call three times in a run would be refused as a loop.
const ARGS = { ticket_id: "HD-1001" };
const OTHER = { ticket_id: "HD-1002" };

async function drift(change: "description" | "annotations") {
  await sandbox("/_admin/helpdesk/drift", {
    method: "POST",
    body: JSON.stringify({ tenant: "acme", tool: "get_ticket_notes", change }),
  });
}

afterEach(async () => {
  await sandbox("/_admin/helpdesk/drift?tenant=acme", { method: "DELETE" });
  forgetRemoteDefinitions();
});

describe("a drifted remote tool behind a 2025 session", () => {
  it("is refused from the first call after the server says its tools changed, within the listing's age", async () => {
    forgetRemoteDefinitions();
    const run = await openRun("acme", { tools: [`helpdesk.${TOOL}`] });
    const listed = await callTool(run, TOOL, ARGS);
    expect(listed.body.outcome, JSON.stringify(listed.body.error)).toBe("success");

    // Changed on the server; the proxy's listing is a moment old, well within its 60 s.
    await drift("annotations");
    const told = await callTool(run, TOOL, OTHER);
    // This call was checked against the listing the proxy had; its answer's stream said the tools changed.
    expect(told.body.outcome, JSON.stringify(told.body.error)).toBe("success");

    const refused = await callTool(run, TOOL, ARGS);
    expect(refused.status).toBe(502);
    expect(refused.body.error?.code).toBe("upstream_changed");
    expect(refused.body.error?.details).toMatchObject({ drift: "changed", remote_tool: "get_ticket_notes" });
    expect(refused.body.error?.side_effect_confirmed).toBe(false);
  });

  it("lists again over the session it resumes once its listing is stale, and serves the unchanged tool", async () => {
    forgetRemoteDefinitions();
    const run = await openRun("acme", { tools: [`helpdesk.${TOOL}`] });
    const first = await callTool(run, TOOL, ARGS);
    expect(first.body.outcome, JSON.stringify(first.body.error)).toBe("success");
    // As when the listing ages: the next call lists again, over the session this isolate kept,
    // which skips `initialize` (and so the server's capabilities): the tool is still there.
    forgetRemoteDefinitions();
    const relisted = await callTool(run, TOOL, OTHER);
    expect(relisted.body.outcome, JSON.stringify(relisted.body.error)).toBe("success");
  });
});

/** The helpdesk's window: the default `definitions_max_age_s`, 60 s, which catalog/helpdesk.yaml also states. */
const DEFAULT_RELIST_WINDOW_MS = 60_000;

describe("a drifted remote tool behind a server that never says its tools changed", () => {
  // Time passes by making the proxy's listings older, never by waiting: a 2026-07-28 server (the
  // helpdesk here) sends no notice of a change, so only the listing's age brings the drift to light.
  it.each([
    ["get_ticket_notes", "the 60 s window", DEFAULT_RELIST_WINDOW_MS],
    ["get_ticket_notes_5s", "the window its upstream declares", SHORT_RELIST_WINDOW_MS],
  ])(
    "%s is served within %s, and refused upstream_changed from the first call after it",
    async (tool, _window, windowMs) => {
      forgetRemoteDefinitions();
      const run = await openRun("acme", { tools: [`helpdesk.${tool}`] });
      const listed = await callTool(run, tool, ARGS);
      expect(listed.body.outcome, JSON.stringify(listed.body.error)).toBe("success");

      await drift("annotations");
      // Two seconds before the window ends, the listing still stands: the changed tool is served.
      ageRemoteDefinitions(windowMs - 2_000);
      const within = await callTool(run, tool, OTHER);
      expect(within.body.outcome, JSON.stringify(within.body.error)).toBe("success");

      // The window has passed: the next call lists again and refuses the changed definition.
      ageRemoteDefinitions(2_000);
      const refused = await callTool(run, tool, ARGS);
      expect(refused.status).toBe(502);
      expect(refused.body.error?.code).toBe("upstream_changed");
      expect(refused.body.error?.details).toMatchObject({
        drift: "changed",
        remote_tool: "get_ticket_notes",
      });
      expect(refused.body.error?.side_effect_confirmed).toBe(false);
    },
  );
});
