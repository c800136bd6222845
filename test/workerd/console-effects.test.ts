import { describe, expect, it } from "vitest";
import { type ConsoleClient, signedInOperator } from "./console-client";
import { asOperator, callTool, openRun, refund, refundsOf, type TestRun } from "./helpers";

/**
 * The console's account of effects across runs, through its HTML pages. Tenant hooli
 * (wrangler.toml): refunds up to 1000 cents are auto-approved, `issue_refund` names its effect by
 * `order_id`, and USD is capped at 4000 a run, 2500 an order a day and 50000 a day. Orders
 * H0100–H0199 are this file's.
 */

async function refundIn(run: TestRun, order: string, amount: number) {
  return callTool(run, "issue_refund", refund(order, amount));
}

/** A refund of `order` made by one run, and the same refund held for a human in a second run. */
async function repeatedRefund(order: string, amount = 700) {
  const first = await openRun("hooli");
  const done = await refundIn(first, order, amount);
  expect(done.body.outcome, JSON.stringify(done.body.error)).toBe("success");
  const second = await openRun("hooli");
  const held = await refundIn(second, order, amount);
  expect(held.body.error?.code).toBe("approval_required");
  return {
    first,
    refundId: (done.body.data as { refund_id: string }).refund_id,
    approvalId: held.body.approval?.id ?? "",
  };
}

/** A run that refunded up to its cap of 4000 cents, holding a fifth refund of one cent for a human. */
async function refundPastRunCap(orders: [string, string, string, string], last: string) {
  const run = await openRun("hooli", { namespace: "support", limits: { max_destructive: 10 } });
  for (const order of orders) {
    const { body } = await refundIn(run, order, 1000);
    expect(body.outcome, JSON.stringify(body.error)).toBe("success");
  }
  const held = await refundIn(run, last, 1);
  expect(held.body.error?.code).toBe("approval_required");
  return { run, approvalId: held.body.approval?.id ?? "" };
}

/** The markup from the element with this id to the end of its kind of element. */
function partOf(html: string, id: string, closing: string): string {
  const start = html.indexOf(`id="${id}"`);
  expect(start, `the page has #${id}`).toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf(closing, start));
}

async function approvalState(approvalId: string) {
  const { body } = await asOperator(`/v1/approvals/${approvalId}`, {}, "hooli");
  return (body.data as { approval: { state: string } }).approval.state;
}

function approve(operator: ConsoleClient, approvalId: string, form: Record<string, string> = {}) {
  return operator.post(`/console/approvals/${approvalId}/approve`, { csrf: operator.csrf, ...form });
}

describe("an approval held because another run acted on the same thing", () => {
  it("shows the earlier refund with its run, time, arguments, outcome and upstream id", async () => {
    const { first, refundId, approvalId } = await repeatedRefund("H0100");
    const operator = await signedInOperator("hooli");
    const page = await operator.get(`/console/approvals/${approvalId}`);
    expect(page.status).toBe(200);
    const earlier = partOf(page.html, "earlier-effects", "</div>");
    expect(earlier).toContain("Already done by another run");
    expect(earlier).toContain("order_id H0100");
    expect(earlier).toContain(`href="/console/runs/${first.id}"`);
    expect(earlier).toContain("support.issue_refund");
    expect(earlier).toContain('<span class="badge badge-confirmed">confirmed</span>');
    expect(earlier).toContain(refundId);
    expect(earlier).toMatch(/<dt>amount_cents<\/dt>\s*<dd><data value="700">\$7\.00<\/data><\/dd>/);
    expect(earlier).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(earlier).toContain("Approving this call would do it again.");
    expect(page.html).toContain('name="confirm_duplicate"');
    expect(page.html).toContain("do it again anyway");
  });

  it("refuses an approval without the confirmation, executing nothing, then executes once with it", async () => {
    const { first, approvalId } = await repeatedRefund("H0101");
    const operator = await signedInOperator("hooli");
    await operator.get(`/console/approvals/${approvalId}`);

    const refused = await approve(operator, approvalId, { reason: "customer asked twice" });
    expect(refused.status).toBe(409);
    expect(refused.html).toContain('role="alert"');
    expect(refused.html).toContain(
      "Another run already acted on the same thing: approving this one would do it again.",
    );
    expect(refused.html).not.toContain("confirm_duplicate: true");
    expect(refused.html).toContain(first.id);
    // The page is shown again with the box, so the operator can confirm.
    expect(refused.html).toContain('name="confirm_duplicate"');
    expect(await refundsOf("H0101")).toHaveLength(1);
    expect(await approvalState(approvalId)).toBe("pending");

    const confirmed = await approve(operator, approvalId, { confirm_duplicate: "yes" });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get("location")).toBe(`/console/approvals/${approvalId}?decided=approve`);
    expect(await refundsOf("H0101")).toHaveLength(2);
    expect(await approvalState(approvalId)).toBe("executed");

    // Posting it again (a reload, a double click) does not refund a third time.
    await approve(operator, approvalId, { confirm_duplicate: "yes" });
    expect(await refundsOf("H0101")).toHaveLength(2);
  });

  it.each([
    ["no confirmation field", "H0110", {}],
    ["an empty confirmation", "H0111", { confirm_duplicate: "" }],
    ["a confirmation other than yes", "H0112", { confirm_duplicate: "on" }],
    ["a refusal in the confirmation field", "H0113", { confirm_duplicate: "no" }],
  ])("refuses an approve form with %s, executing nothing", async (_case, order, form) => {
    const { approvalId } = await repeatedRefund(order);
    const operator = await signedInOperator("hooli");
    await operator.get(`/console/approvals/${approvalId}`);
    const refused = await approve(operator, approvalId, form);
    expect(refused.status).toBe(409);
    expect(refused.html).toContain("would do it again");
    expect(await approvalState(approvalId)).toBe("pending");
    expect(await refundsOf(order)).toHaveLength(1);
  });

  it("refuses a confirmed approve form without its CSRF token, executing nothing", async () => {
    const { approvalId } = await repeatedRefund("H0120");
    const operator = await signedInOperator("hooli");
    const forged = await operator.post(`/console/approvals/${approvalId}/approve`, {
      confirm_duplicate: "yes",
    });
    expect(forged.status).toBe(403);
    expect(await refundsOf("H0120")).toHaveLength(1);
    expect(await approvalState(approvalId)).toBe("pending");
  });

  it("needs no confirmation to reject", async () => {
    const { approvalId } = await repeatedRefund("H0121");
    const operator = await signedInOperator("hooli");
    await operator.get(`/console/approvals/${approvalId}`);
    const rejected = await operator.post(`/console/approvals/${approvalId}/reject`, {
      csrf: operator.csrf,
      reason: "already refunded by the other run",
    });
    expect(rejected.status).toBe(303);
    expect(await approvalState(approvalId)).toBe("rejected");
    expect(await refundsOf("H0121")).toHaveLength(1);
  });
});

describe("an approval held because the call would pass a value cap", () => {
  it("shows the cap, its figures, this call's amount, the override it records, and today's usage", async () => {
    const { approvalId } = await refundPastRunCap(["H0130", "H0131", "H0132", "H0133"], "H0134");
    const operator = await signedInOperator("hooli");
    const page = await operator.get(`/console/approvals/${approvalId}`);
    expect(page.status).toBe(200);
    const cap = partOf(page.html, "value-cap", "</div>");
    expect(cap).toContain("Per run");
    expect(cap).toContain("<code>per_run</code>");
    expect(cap).toMatch(/<dt>Currency<\/dt>\s*<dd>USD<\/dd>/);
    expect(cap).toMatch(/<dt>Limit<\/dt>\s*<dd>\$40\.00<\/dd>/);
    expect(cap).toMatch(/<dt>Used<\/dt>\s*<dd>\$40\.00<\/dd>/);
    expect(cap).toMatch(/<dt>Reserved<\/dt>\s*<dd>\$0\.00<\/dd>/);
    expect(cap).toMatch(/<dt>Remaining<\/dt>\s*<dd>\$0\.00<\/dd>/);
    expect(cap).toMatch(/<dt>This call<\/dt>\s*<dd[^>]*><strong>\$0\.01<\/strong>/);
    expect(cap).toContain("recorded as an operator override");
    // A per-run cap has no subject.
    expect(cap).not.toContain("<dt>Subject</dt>");

    const today = partOf(page.html, "caps-today", "</table>");
    const [usd] = (
      (await asOperator("/v1/value-usage", {}, "hooli")).body.data as { usage: Array<{ day: string }> }
    ).usage;
    expect(today).toContain("USD");
    expect(today).toContain(usd?.day);
    expect(today).toMatch(/<td>\$500\.00<\/td>/);
    // This run alone confirmed $40.00 today; other runs of the tenant may have added to it.
    const used = /<td>\$500\.00<\/td>\s*<td>\$([\d,]+\.\d\d)<\/td>/.exec(today)?.[1] ?? "0";
    expect(Number(used.replaceAll(",", ""))).toBeGreaterThanOrEqual(40);
    // No confirmation is asked for: nothing else was done to these orders.
    expect(page.html).not.toContain('name="confirm_duplicate"');
  });

  it("names the subject of a per-order cap", async () => {
    const run = await openRun("hooli", { namespace: "support", limits: { max_destructive: 10 } });
    expect((await refundIn(run, "H0140", 1000)).body.outcome).toBe("success");
    expect((await refundIn(run, "H0140", 999)).body.outcome).toBe("success");
    const held = await refundIn(run, "H0140", 600);
    const operator = await signedInOperator("hooli");
    const page = await operator.get(`/console/approvals/${held.body.approval?.id ?? ""}`);
    const cap = partOf(page.html, "value-cap", "</div>");
    expect(cap).toContain("<code>per_subject_day</code>");
    expect(cap).toMatch(/<dt>Subject<\/dt>\s*<dd><code>H0140<\/code><\/dd>/);
    expect(cap).toMatch(/<dt>Remaining<\/dt>\s*<dd>\$5\.01<\/dd>/);
    expect(cap).toMatch(/<strong>\$6\.00<\/strong>/);
  });

  it("executes the approval past an order's cap once and shows it as an override afterwards", async () => {
    const run = await openRun("hooli", { namespace: "support", limits: { max_destructive: 10 } });
    expect((await refundIn(run, "H0150", 1000)).body.outcome).toBe("success");
    expect((await refundIn(run, "H0150", 999)).body.outcome).toBe("success");
    const approvalId = (await refundIn(run, "H0150", 600)).body.approval?.id ?? "";
    const operator = await signedInOperator("hooli");
    await operator.get(`/console/approvals/${approvalId}`);
    const approved = await approve(operator, approvalId, { reason: "goodwill" });
    expect(approved.status).toBe(303);
    expect(await refundsOf("H0150")).toHaveLength(3);
    const after = await operator.get(`/console/approvals/${approvalId}?decided=approve`);
    expect(after.html).toContain("The call executed once");
    expect(partOf(after.html, "value-cap", "</div>")).toContain("recorded as an operator override");
    // Decided: today's usage belongs to deciding, not to the record.
    expect(after.html).not.toContain('id="caps-today"');
  });
});
