import { describe, expect, it } from "vitest";
import { agentOf, browserStackFor, screenshotPath } from "./harness";

const stack = browserStackFor();

const { post, openRun } = agentOf(stack);

const REFUND = {
  tool: "issue_refund",
  args: { order_id: "A1002", amount_cents: 500, reason: "user_cancel" },
};

async function refundsOf500(run: { id: string; token: string }): Promise<number> {
  const order = await post(`/v1/runs/${run.id}/calls`, run.token, {
    tool: "lookup_order",
    args: { order_id: "A1002" },
  });
  const refunds = (order.data?.refunds ?? []) as Array<{ amount_cents: number }>;
  return refunds.filter((refund) => refund.amount_cents === 500).length;
}

describe("an operator's decision in a real browser", () => {
  it("shows the order's money, warns of the same refund in another run, and needs a confirmation to do it again", async () => {
    const { browser, proxy } = stack();
    const first = await openRun();
    const second = await openRun();
    const before = await refundsOf500(first);
    const askedFirst = await post(`/v1/runs/${first.id}/calls`, first.token, REFUND);
    const askedSecond = await post(`/v1/runs/${second.id}/calls`, second.token, REFUND);
    expect(askedFirst.error?.code).toBe("approval_required");
    expect(askedSecond.error?.code).toBe("approval_required");
    const firstId = askedFirst.approval?.id ?? "";
    const secondId = askedSecond.approval?.id ?? "";

    const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto("/console/sign-in");
    await page.getByLabel("Operator key").fill("acme-operator-key");
    await page.getByLabel("Operator key").press("Enter");
    await page.waitForURL((url) => url.pathname === "/console");
    // The operator is named, not shown as a hash of their key.
    expect(await page.locator("header .who").textContent()).toContain("Dana Reyes");

    // Both rows of the list say plainly that the other run asked for the same refund.
    for (const id of [firstId, secondId]) {
      const row = page.getByRole("row").filter({ has: page.locator(`a[href="/console/approvals/${id}"]`) });
      await expect.poll(() => row.textContent()).toContain("Possible duplicate");
    }

    // The approval page: the order's money in dollars, the warning, and the confirmation box.
    await page.goto(`/console/approvals/${firstId}`);
    const facts = (await page.locator("dl.context-facts").textContent()) ?? "";
    expect(facts).toContain("This refund$5.00");
    expect(facts).toMatch(/Order total\$\d+\.\d\d/);
    expect(facts).toMatch(/Still refundable\$\d+\.\d\d/);
    expect(await page.locator("#duplicates").textContent()).toContain(secondId);
    // The browser itself will not submit the approval without the box ticked.
    await page.getByRole("button", { name: "Approve and execute" }).click();
    expect(new URL(page.url()).searchParams.get("decided")).toBeNull();
    await page.getByLabel(/do it again anyway/).check();
    await page.getByRole("button", { name: "Approve and execute" }).click();
    await page.waitForURL((url) => url.searchParams.get("decided") === "approve");
    expect(await page.getByRole("status").first().textContent()).toContain("Approved by Dana Reyes");
    expect(await refundsOf500(first)).toBe(before + 1);

    // The second approval names the executed one and who approved it; the operator rejects it.
    await page.goto(`/console/approvals/${secondId}`);
    const warning = (await page.locator("#duplicates").textContent()) ?? "";
    expect(warning).toContain(firstId);
    expect(warning).toContain("executed");
    expect(warning).toContain("approved by Dana Reyes");
    await page.screenshot({ path: screenshotPath("console-duplicate.png"), fullPage: true });
    await page.getByLabel("Reason (required)").fill(`Duplicate of ${firstId}, already refunded.`);
    await page.getByRole("button", { name: "Reject" }).click();
    await page.waitForURL((url) => url.searchParams.get("decided") === "reject");
    // Read from the other run: the same read a third time in one run trips its repeat breaker.
    expect(await refundsOf500(second)).toBe(before + 1);

    // The agent of the second run is told why, and nothing was refunded twice.
    const retried = await post(`/v1/runs/${second.id}/calls`, second.token, REFUND);
    expect(retried.error?.code).toBe("approval_rejected");
    await context.close();
  });
});
