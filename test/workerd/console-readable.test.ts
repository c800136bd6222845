import { describe, expect, it, vi } from "vitest";
import { signedInOperator } from "./console-client";
import { asOperator, callTool, openRun, refund } from "./helpers";

/**
 * What the console shows an operator reads as information, not noise: reasons as sentences naming
 * the tool and the untrusted source, long ids shortened (the whole id kept for hover and copy), the
 * health page without charts for namespaces with no traffic, and a success rate that does not count
 * a call waiting for a human as a failure.
 */
describe("the console, read by an operator", () => {
  it("says why a call waits in a sentence naming the tool and the untrusted source, and shortens run ids", async () => {
    const run = await openRun("acme");
    // The customer's messages are third-party text: reading them taints the run.
    const read = await callTool(run, "get_customer_profile", { customer_id: "C101" });
    expect(read.body.outcome, JSON.stringify(read.body.error)).toBe("success");
    const ticket = { customer_id: "C101", priority: "low", summary: "Customer asked for a call back." };
    const asked = await callTool(run, "create_internal_ticket", ticket);
    expect(asked.body.error?.code, JSON.stringify(asked.body.error)).toBe("approval_required");
    const id = asked.body.approval?.id ?? "";

    const operator = await signedInOperator();
    const { html } = await operator.get("/console?refresh=off");
    const row = new RegExp(`<tr>(?:(?!</tr>).)*/console/approvals/${id}(?:(?!</tr>).)*</tr>`, "s").exec(
      html,
    )?.[0];
    expect(row, "the pending row").toBeDefined();
    expect(row).toMatch(
      /The run read untrusted content from <code>get_customer_profile<\/code> \(call <code class="short-id" title="call_[0-9a-f]+">call_[0-9a-f]+<\/code>\) before asking for <code>create_internal_ticket<\/code>\./,
    );
    expect(row).not.toContain("the run read untrusted content in call");
    // The run id: shown short, whole in the title (hover) and in the text (copy).
    expect(run.id.length).toBeGreaterThanOrEqual(36);
    expect(row).toContain(`<code class="short-id" title="${run.id}">${run.id}</code>`);

    const page = (await operator.get(`/console/approvals/${id}`)).html;
    expect(page).toContain("before asking for <code>create_internal_ticket</code>.");
  });

  it("writes a policy's reason as a sentence", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1002", 140));
    const id = asked.body.approval?.id ?? "";
    const operator = await signedInOperator();
    const page = (await operator.get(`/console/approvals/${id}`)).html;
    expect(page).toMatch(/<li>Destructive tools need a human approval\.<\/li>/);
  });

  it("collapses namespaces without traffic into one line, and counts no approval wait as a failure", async () => {
    // globex, whom no other case of this file calls: its counts are this case's alone.
    const run = await openRun("globex");
    const looked = await callTool(run, "lookup_order", { order_id: "B2002" });
    expect(looked.body.outcome).toBe("success");
    // Above globex's auto-approved refunds (10.00): it waits for a human.
    const asked = await callTool(run, "issue_refund", refund("B2002", 1300));
    expect(asked.body.error?.code).toBe("approval_required");

    // Two calls: one succeeded, one waits for a human. The wait is neither success nor failure.
    const totals = await vi.waitFor(
      async () => {
        const { body } = await asOperator("/v1/metrics?namespace=support", {}, "globex");
        const series = (body.data as { series: Array<{ totals: Record<string, number | null> }> }).series;
        expect(series[0]?.totals.calls).toBe(2);
        return series[0]?.totals ?? {};
      },
      { timeout: 15_000, interval: 250 },
    );
    expect(totals.escalations).toBe(1);
    expect(totals.success_rate).toBe(1);

    const operator = await signedInOperator("globex");
    const html = await vi.waitFor(
      async () => {
        const page = await operator.get("/console/health");
        expect(page.html).toContain('id="support-heading"');
        return page.html;
      },
      { timeout: 15_000, interval: 250 },
    );
    expect(html).toMatch(/<tr><th scope="row">Success rate<\/th><td>[^<]*<\/td><td>100 %<\/td>/);
    // globex's other namespace had no call: named on one line, with no tables or charts of its own.
    expect(html).toMatch(/<p class="quiet-namespaces">No traffic in the last 48 h in <code>shipping<\/code>/);
    expect(html).not.toContain('id="shipping-heading"');
    expect(html).not.toContain('id="shipping-calls"');
  });
});
