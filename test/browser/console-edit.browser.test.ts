import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { agentOf, browserStackFor, screenshotPath, signIn } from "./harness";

/**
 * "Edit and approve" in a real browser. In the sandbox acme asks a finance lead above 20000 cents and
 * refuses refunds above 50000 (wrangler.toml); Dana Reyes (acme-operator-key) holds finance_lead.
 */

const stack = browserStackFor();

const { post, openRun } = agentOf(stack);

/** The refunds the sandbox's payments upstream holds for an order, by amount, read by an agent's lookup. */
async function refundsAtUpstream(orderId: string): Promise<number[]> {
  // A fresh run for each look: one run reading the same order again and again trips its repeat breaker.
  const run = await openRun();
  const order = await post(`/v1/runs/${run.id}/calls`, run.token, {
    tool: "lookup_order",
    args: { order_id: orderId },
  });
  expect(order.outcome, JSON.stringify(order.error)).toBe("success");
  return ((order.data?.refunds ?? []) as Array<{ amount_cents: number }>).map((made) => made.amount_cents);
}

/** Submits the "Edit and approve" form and returns the answer's status once the page has loaded. */
async function submitEdit(page: Page): Promise<number> {
  const answer = page.waitForResponse(
    (response) => response.request().method() === "POST" && response.url().endsWith("/approve"),
  );
  await page.getByRole("button", { name: "Approve edited call" }).click();
  const status = (await answer).status();
  await page.waitForLoadState();
  return status;
}

describe("edit and approve in a real browser", () => {
  it("approves a refund edited down: the edited amount executes once, and the approval and the trace say who changed it", async () => {
    const run = await openRun();
    const asked = await post(`/v1/runs/${run.id}/calls`, run.token, {
      tool: "issue_refund",
      args: { order_id: "A1004", amount_cents: 27_500, reason: "user_cancel" },
    });
    expect(asked.error?.code, JSON.stringify(asked.error)).toBe("approval_required");
    const approvalId = asked.approval?.id ?? "";

    const { browser, proxy } = stack();
    const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page, "acme-operator-key");
    await page.goto(`/console/approvals/${approvalId}`);

    const form = page.locator("form#edit-approve");
    const amount = form.getByLabel("amount_cents");
    expect(await amount.getAttribute("type")).toBe("number");
    expect(await amount.inputValue()).toBe("27500");
    expect(await form.getByLabel("order_id").inputValue()).toBe("A1004");
    expect(await form.locator("select#edit-arg-reason option").allTextContents()).toEqual([
      "user_cancel",
      "out_of_stock",
      "price_error",
    ]);
    expect(await form.getByLabel("reason").inputValue()).toBe("user_cancel");
    // The plain decisions are still offered.
    expect(await page.getByRole("button", { name: "Approve and execute" }).count()).toBe(1);
    expect(await page.getByRole("button", { name: "Reject" }).count()).toBe(1);

    // Above the tenant's limit: refused, the problem beside the amount, the typed value kept.
    await amount.fill("60000");
    expect(await submitEdit(page)).toBe(403);
    const amountError = page.locator("#edit-arg-amount_cents-error");
    expect(await amountError.textContent()).toContain("60000 is above this tenant's per-refund limit");
    expect(await amountError.textContent()).toContain("At most 50000 cents per refund");
    expect(await page.locator("#edit-arg-amount_cents").getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#edit-arg-amount_cents").inputValue()).toBe("60000");
    expect(await page.getByRole("alert").first().textContent()).toContain(
      "The edited arguments cannot be approved",
    );
    await page.screenshot({ path: screenshotPath("console-edit-refused.png"), fullPage: true });

    // An order id the schema refuses: the problem is beside the order, not the amount.
    await page.locator("#edit-arg-order_id").fill("A10");
    await page.locator("#edit-arg-amount_cents").fill("17300");
    expect(await submitEdit(page)).toBe(422);
    expect(await page.locator("#edit-arg-order_id-error").textContent()).not.toBe("");
    expect(await page.locator("#edit-arg-amount_cents-error").count()).toBe(0);
    expect(await page.locator("#edit-arg-order_id").inputValue()).toBe("A10");
    expect(await refundsAtUpstream("A1004")).toEqual([]);

    // Edited down and approved: the edited call executes, once.
    await page.locator("#edit-arg-order_id").fill("A1004");
    await page.locator("#edit-arg-amount_cents").fill("17300");
    await submitEdit(page);
    await page.waitForURL((url) => url.searchParams.get("decided") === "approve");
    expect(await page.getByRole("status").first().textContent()).toContain("The call executed once: success");
    const edit = (await page.locator("#edit").textContent()) ?? "";
    expect(edit).toMatch(/Dana Reyes changed amount_cents \$275\.00 → \$173\.00 at \d{4}-\d{2}-\d{2}/);
    expect(edit).toContain("Asked by the agent");
    expect(await page.locator("h1").textContent()).toContain("executed");
    expect(await page.locator("form#edit-approve").count()).toBe(0);
    await page.screenshot({ path: screenshotPath("console-edit-approved.png"), fullPage: true });
    expect(await refundsAtUpstream("A1004")).toEqual([17_300]);

    // The run's trace shows the edit on the call the approval executed.
    await page.getByRole("link", { name: "See the run's trace" }).click();
    const executed = page.locator("li.by-operator");
    expect(await executed.count()).toBe(1);
    const entry = (await executed.textContent()) ?? "";
    expect(entry).toContain("edited before approval");
    expect(entry).toContain("Dana Reyes changed amount_cents $275.00 → $173.00.");
    await context.close();
  });
});
