import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { unstable_readConfig as readConfig } from "wrangler";
import { agentOf, browserStackFor, screenshotPath, signIn } from "./harness";

/**
 * Who may decide, the two-person rule and the SLA, as operators meet them in the console. acme
 * (wrangler.toml) asks finance_lead above 20000 cents and two different operators above 30000;
 * Dana Reyes and Lee Park hold finance_lead, Riley Chen only support_lead, and Dana has a second
 * key (.dev.vars.example). This file's proxy gives acme an approval SLA of one second, so an email
 * send (which declares no SLA of its own) is overdue by the time the last test looks, with no
 * waiting; issue_refund keeps its own ten minutes.
 */

const KEYS = {
  dana: "acme-operator-key",
  lee: "acme-operator-key-lee",
  riley: "acme-operator-key-riley",
  danaSecondKey: "acme-operator-key-dana-2",
} as const;

/** The sandbox's TENANTS with acme's approval SLA at one second. */
function tenantsWithShortSla(): string {
  const config = readConfig(
    { config: new URL("../../wrangler.toml", import.meta.url).pathname, env: "sandbox" },
    { hideWarnings: true },
  );
  const tenants = structuredClone(config.vars.TENANTS) as Record<string, Record<string, unknown>>;
  return JSON.stringify({ ...tenants, acme: { ...tenants.acme, approval_sla_s: 1 } });
}

const stack = browserStackFor({ vars: { TENANTS: tenantsWithShortSla() } });

const { post, openRun } = agentOf(stack);

/** An agent's call that needs a human: returns the approval's id. */
async function askApproval(tool: string, args: Record<string, unknown>): Promise<string> {
  const run = await openRun();
  const asked = await post(`/v1/runs/${run.id}/calls`, run.token, { tool, args });
  expect(asked.error?.code, JSON.stringify(asked.error)).toBe("approval_required");
  return asked.approval?.id ?? "";
}

const refund = (order_id: string, amount_cents: number) => ({
  order_id,
  amount_cents,
  reason: "user_cancel",
});

/** The refunds of `amount` the sandbox's payments upstream holds for an order, read by an agent's lookup. */
async function refundsAtUpstream(orderId: string, amount: number): Promise<number> {
  // A fresh run for each look: one run reading the same order again and again trips its repeat breaker.
  const run = await openRun();
  const order = await post(`/v1/runs/${run.id}/calls`, run.token, {
    tool: "lookup_order",
    args: { order_id: orderId },
  });
  expect(order.outcome, JSON.stringify(order.error)).toBe("success");
  const refunds = (order.data?.refunds ?? []) as Array<{ amount_cents: number }>;
  return refunds.filter((entry) => entry.amount_cents === amount).length;
}

/** A signed-in operator's page, in a browser context of its own (its own session cookie). */
async function operatorPage(key: string): Promise<Page> {
  const { browser, proxy } = stack();
  const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await signIn(page, key);
  return page;
}

/**
 * Posts a decision the page does not offer, as a crafted form would: a form with the session's CSRF
 * token (from the page's sign-out form) submitted by the browser. Returns the answer's status; the
 * page then shows the answer.
 */
async function postDecisionAnyway(page: Page, approvalId: string, decision: "approve" | "reject") {
  const answer = page.waitForResponse(
    (response) =>
      response.request().method() === "POST" &&
      new URL(response.url()).pathname === `/console/approvals/${approvalId}/${decision}`,
  );
  // A script string: this file is type-checked for Node, which has no DOM types.
  await page.evaluate(`(() => {
    const form = document.createElement("form");
    form.method = "post";
    form.action = ${JSON.stringify(`/console/approvals/${approvalId}/${decision}`)};
    for (const [name, value] of [
      ["csrf", document.querySelector('input[name="csrf"]').value],
      ["reason", "deciding it anyway"],
    ]) {
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      input.value = value;
      form.append(input);
    }
    document.body.append(form);
    form.submit();
  })()`);
  const status = (await answer).status();
  await page.waitForLoadState();
  return status;
}

/** The row of a console list that links to this approval. */
function rowOf(page: Page, approvalId: string) {
  return page.getByRole("row").filter({ has: page.locator(`a[href="/console/approvals/${approvalId}"]`) });
}

/**
 * An email send, drafted and asked for first, so its one-second SLA has passed by the time the last
 * test looks.
 */
let emailApproval = "";
beforeAll(async () => {
  const run = await openRun();
  const drafted = await post(`/v1/runs/${run.id}/calls`, run.token, {
    tool: "draft_customer_email",
    args: {
      customer_id: "C100",
      template: "refund_confirmation",
      order_id: "A1001",
      notes: "Sorry for the wait.",
    },
  });
  expect(drafted.outcome, JSON.stringify(drafted.error)).toBe("success");
  const asked = await post(`/v1/runs/${run.id}/calls`, run.token, {
    tool: "send_customer_email",
    args: { draft_id: drafted.data?.draft_id, draft_version: drafted.data?.version },
  });
  expect(asked.error?.code, JSON.stringify(asked.error)).toBe("approval_required");
  emailApproval = asked.approval?.id ?? "";
});

describe("approver roles, the two-person rule and the SLA in a real browser", () => {
  it("shows an operator without the approval's role a read-only page naming the role, and refuses their decision with 403", async () => {
    const approvalId = await askApproval("issue_refund", refund("A1002", 25_000));
    const riley = await operatorPage(KEYS.riley);
    await riley.goto(`/console/approvals/${approvalId}`);
    const decision = (await riley.locator('section[aria-labelledby="decide-heading"]').textContent()) ?? "";
    expect(decision).toContain("Only an operator holding the role “finance_lead” may decide this approval");
    expect(decision).toContain("your key holds “support_lead”");
    expect(await riley.getByRole("button", { name: /approve|reject/i }).count()).toBe(0);
    expect(await riley.locator(`form[action$="/approve"], form[action$="/reject"]`).count()).toBe(0);
    await riley.screenshot({ path: screenshotPath("console-role-read-only.png"), fullPage: true });

    for (const decision of ["approve", "reject"] as const) {
      await riley.goto(`/console/approvals/${approvalId}`);
      expect(await postDecisionAnyway(riley, approvalId, decision)).toBe(403);
      const refused = (await riley.getByRole("main").textContent()) ?? "";
      expect(refused).toContain('Only an operator holding the role "finance_lead" may decide this approval');
      // Still pending, still not decidable by Riley.
      expect(await riley.getByRole("button", { name: /approve|reject/i }).count()).toBe(0);
    }
    expect(await refundsAtUpstream("A1002", 25_000)).toBe(0);
    await riley.context().close();
  });

  it("counts a first approval as 1 of 2 in the page and the lists, refuses the same person's second key, and executes on a second operator's", async () => {
    const approvalId = await askApproval("issue_refund", refund("A1004", 35_000));
    const dana = await operatorPage(KEYS.dana);
    await dana.goto(`/console/approvals/${approvalId}`);
    await dana.getByRole("button", { name: "Approve (1 of 2)" }).click();
    await dana.waitForURL((url) => url.searchParams.get("decided") === "approve");
    expect(await dana.locator("#approvers").textContent()).toContain("1 of 2");
    expect(await dana.locator("#approvers").textContent()).toContain("Dana Reyes");
    expect(await dana.getByRole("main").textContent()).toContain("You approved this (1 of 2)");
    expect(await dana.getByRole("button", { name: /^Approve/ }).count()).toBe(0);
    expect(await refundsAtUpstream("A1004", 35_000)).toBe(0);

    // The pending list and the history say so without opening the approval.
    await dana.goto("/console?refresh=off");
    expect(await rowOf(dana, approvalId).textContent()).toContain("1 of 2 approvals: Dana Reyes");
    await dana.screenshot({ path: screenshotPath("console-two-person-pending.png"), fullPage: true });
    await dana.goto("/console/approvals");
    expect(await rowOf(dana, approvalId).textContent()).toContain("1 of 2 approvals: Dana Reyes");

    // Dana's second key is Dana: offered no approval, and refused one posted anyway.
    const danaAgain = await operatorPage(KEYS.danaSecondKey);
    await danaAgain.goto(`/console/approvals/${approvalId}`);
    expect(await danaAgain.getByRole("main").textContent()).toContain("You approved this (1 of 2)");
    expect(await danaAgain.getByRole("button", { name: /^Approve/ }).count()).toBe(0);
    expect(await postDecisionAnyway(danaAgain, approvalId, "approve")).toBe(409);
    expect(await danaAgain.getByRole("main").textContent()).toContain(
      "Dana Reyes already approved this with another key (1 of 2)",
    );
    expect(await refundsAtUpstream("A1004", 35_000)).toBe(0);

    // Lee is a second, different person: the approval executes, once.
    const lee = await operatorPage(KEYS.lee);
    await lee.goto(`/console/approvals/${approvalId}`);
    await lee.getByRole("button", { name: "Approve and execute" }).click();
    await lee.waitForURL((url) => url.searchParams.get("decided") === "approve");
    expect(await lee.getByRole("status").first().textContent()).toContain("Approved by Lee Park");
    expect(await lee.locator("#approvers").textContent()).toContain("2 of 2");
    expect(await refundsAtUpstream("A1004", 35_000)).toBe(1);
    await lee.goto("/console/approvals");
    expect(await rowOf(lee, approvalId).textContent()).toContain("2 of 2 approvals: Dana Reyes, Lee Park");
    for (const page of [dana, danaAgain, lee]) await page.context().close();
  });

  it("shows an approval past its SLA as overdue in the lists and on its page, and that the escalation role was notified", async () => {
    const dana = await operatorPage(KEYS.dana);
    await dana.goto("/console?refresh=off");
    const row = rowOf(dana, emailApproval);
    expect(await row.textContent()).toMatch(/overdue\s*decision was due/);
    await dana.goto("/console/approvals?state=pending");
    expect(await rowOf(dana, emailApproval).textContent()).toContain("overdue");

    // The run's ledger alarm announces it at its SLA; the page says so once it has.
    await expect
      .poll(
        async () => {
          await dana.goto(`/console/approvals/${emailApproval}`);
          return (await dana.getByRole("main").textContent()) ?? "";
        },
        { timeout: 15_000, interval: 250 },
      )
      .toContain("The escalation role was notified");
    expect(await dana.locator("h1").textContent()).toContain("overdue");
    expect(await dana.getByRole("main").textContent()).toContain("Overdue: a decision was due");
    await dana.screenshot({ path: screenshotPath("console-overdue.png"), fullPage: true });
    await dana.context().close();
  });
});
