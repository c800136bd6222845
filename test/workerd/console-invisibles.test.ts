import { describe, expect, it } from "vitest";
import { revealInvisibles } from "../../src/console/reveal-invisibles";
import { signedInOperator } from "./console-client";
import { callTool, openRun } from "./helpers";

const RLO = "\u202E";
const PDF = "\u202C";

/**
 * Text an agent or an upstream wrote reaches the console as written: a right-to-left override, a
 * zero-width space or a control character is shown as a visible escape and flagged, never drawn.
 */
describe("hidden characters in the console", () => {
  it("shows an email draft's bidi override as an escape on the pending list, the approval page and the run page, with a notice", async () => {
    const run = await openRun("acme");
    const drafted = await callTool(run, "draft_customer_email", {
      customer_id: "C100",
      template: "refund_confirmation",
      order_id: "A1001",
      notes: `Your refund of ${RLO}00.005$${PDF} is on its way.`,
    });
    expect(drafted.body.outcome, JSON.stringify(drafted.body.error)).toBe("success");
    const draft = drafted.body.data as { draft_id: string; version: number };
    const asked = await callTool(run, "send_customer_email", {
      draft_id: draft.draft_id,
      draft_version: draft.version,
    });
    expect(asked.body.error?.code).toBe("approval_required");

    const operator = await signedInOperator("acme");
    const approval = await operator.get(`/console/approvals/${asked.body.approval?.id}`);
    expect(approval.status).toBe(200);
    expect(approval.html).not.toContain(RLO);
    expect(approval.html).toContain("⟨U+202E⟩00.005$⟨U+202C⟩");
    expect(approval.html).toMatch(/This page shows 2 hidden characters/);

    for (const path of ["/console", `/console/runs/${run.id}`]) {
      const page = await operator.get(path);
      expect(page.status).toBe(200);
      expect(page.html, path).not.toContain(RLO);
    }
  });

  it("shows a ticket summary's zero-width and control characters as escapes on the run page", async () => {
    const run = await openRun("acme");
    const created = await callTool(run, "create_internal_ticket", {
      customer_id: "C100",
      priority: "low",
      summary: "Refund ok\u200B\u0007 to approve",
    });
    expect(created.body.outcome, JSON.stringify(created.body.error)).toBe("success");
    const page = await (await signedInOperator("acme")).get(`/console/runs/${run.id}`);
    expect(page.html).toContain("Refund ok⟨U+200B⟩⟨U+0007⟩ to approve");
    expect(page.html).toMatch(/This page shows \d+ hidden characters?/);
  });

  it("leaves pages without hidden characters unflagged, and keeps line breaks, tabs and emoji joiners", async () => {
    const page = await (await signedInOperator("acme")).get("/console/health");
    expect(page.html).not.toMatch(/hidden character/);
    expect(revealInvisibles("a\tb\nc 👩‍💻")).toEqual({ text: "a\tb\nc 👩‍💻", count: 0 });
    expect(revealInvisibles("\uFEFFx\u00AD\u{E0041}")).toEqual({
      text: "⟨U+FEFF⟩x⟨U+00AD⟩⟨U+E0041⟩",
      count: 3,
    });
  });
});
