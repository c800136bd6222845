import { describe, expect, it } from "vitest";
import { browserStackFor, horizontalOverflow, screenshotPath, signIn } from "./harness";

const OPERATOR_KEY = "acme-operator-key";
const PHONE = { width: 390, height: 844 };

/** The parts of an envelope this test reads. */
interface Envelope {
  outcome: string;
  data: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  approval: { id: string; state: string } | null;
}

const stack = browserStackFor();

async function api(method: string, path: string, credential: string, body?: unknown) {
  const response = await fetch(`${stack().proxy.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

/** An agent's run: opened with the demo tenant key, called with its run token. */
async function agentRun() {
  const opened = await api("POST", "/v1/runs", "acme-demo-key", { namespace: "support" });
  expect(opened.status).toBe(201);
  const run = { id: String(opened.body.data?.run_id), token: String(opened.body.data?.run_token) };
  return {
    id: run.id,
    call: (tool: string, args: Record<string, unknown>) =>
      api("POST", `/v1/runs/${run.id}/calls`, run.token, { tool, args }),
  };
}

describe("the console's history and search in a real browser", () => {
  it("lets an operator find what happened to an order: its runs, their calls and what each returned", async () => {
    const { browser, proxy } = stack();
    // The agent: looks an order up, asks for a refund; an operator approves it over the API.
    const run = await agentRun();
    expect((await run.call("lookup_order", { order_id: "A1004" })).body.outcome).toBe("success");
    const asked = await run.call("issue_refund", {
      order_id: "A1004",
      amount_cents: 100,
      reason: "user_cancel",
    });
    expect(asked.body.error?.code).toBe("approval_required");
    const approvalId = asked.body.approval?.id ?? "";
    const approved = await api("POST", `/v1/approvals/${approvalId}/approve`, OPERATOR_KEY, {});
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);

    const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page);

    // Runs: search by the order id; the run that named it is listed with what it called.
    await page.getByRole("link", { name: "Runs", exact: true }).click();
    await page.waitForURL((url) => url.pathname === "/console/runs");
    await page.getByLabel("Order, customer or other id").fill("A1004");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL((url) => url.searchParams.get("subject") === "A1004");
    const row = page.getByRole("row").filter({ has: page.locator(`a[href="/console/runs/${run.id}"]`) });
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    const rowText = (await row.textContent()) ?? "";
    expect(rowText).toContain("order_id=A1004");
    expect(rowText).toContain("issue_refund");
    await page.screenshot({ path: screenshotPath("console-runs.png"), fullPage: true });

    // The run page: every call, who made it, effects apart from checks, and the result.
    await row.getByRole("link").first().click();
    await page.waitForURL((url) => url.pathname === `/console/runs/${run.id}`);
    const calls = page.locator("ol.timeline > li");
    expect(await calls.count()).toBe(3);
    const executed = page.locator("ol.timeline > li.by-operator");
    const executedText = (await executed.textContent()) ?? "";
    expect(executedText).toContain("issue_refund");
    expect(executedText).toContain("1 effect · 1 check");
    expect(executedText).toContain("Dana Reyes");
    const result = executed.locator("pre.result");
    expect(await result.textContent()).toContain('"amount_cents": 100');
    expect(await calls.first().locator("pre.result").textContent()).toContain('"order_id": "A1004"');
    await page.screenshot({ path: screenshotPath("console-run-calls.png"), fullPage: true });

    // History: the approval with its decision, found by the same id.
    await page.goto("/console/approvals?subject=A1004");
    const decided = page
      .getByRole("row")
      .filter({ has: page.locator(`a[href="/console/approvals/${approvalId}"]`) });
    expect(await decided.count()).toBe(1);
    expect(await decided.textContent()).toContain("executed");
    expect(await decided.textContent()).toContain("Dana Reyes");
    await page.screenshot({ path: screenshotPath("console-history.png"), fullPage: true });
    await context.close();
  });

  it("updates the pending list in place when an agent asks for a new approval", async () => {
    const { browser, proxy } = stack();
    const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page);
    // A marker on the page's window survives only if the page is never reloaded or navigated.
    await page.evaluate("window.liveMarker = 'still here'");
    const stamp = (await page.locator(".live-stamp").textContent()) ?? "";

    const run = await agentRun();
    const asked = await run.call("issue_refund", {
      order_id: "A1005",
      amount_cents: 100,
      reason: "user_cancel",
    });
    const approvalId = asked.body.approval?.id ?? "";
    expect(approvalId).toMatch(/^apr_/);

    const row = page.locator(`a[href="/console/approvals/${approvalId}"]`);
    await expect.poll(() => row.count(), { timeout: 15_000, interval: 250 }).toBe(1);
    expect(await page.evaluate("window.liveMarker")).toBe("still here");
    expect(new URL(page.url()).pathname).toBe("/console");
    expect(await page.locator(".live-stamp").textContent()).not.toBe(stamp);
    await context.close();
  });

  it("fits a phone: no page scrolls sideways at 390 px, and tables become cards", async () => {
    const { browser, proxy } = stack();
    const run = await agentRun();
    await run.call("lookup_order", { order_id: "A1001" });
    await run.call("issue_refund", { order_id: "A1001", amount_cents: 100, reason: "user_cancel" });
    const context = await browser.newContext({
      baseURL: proxy.url,
      viewport: PHONE,
      isMobile: true,
      hasTouch: true,
    });
    const page = await context.newPage();
    await signIn(page);

    for (const path of ["/console", "/console/approvals", "/console/runs", `/console/runs/${run.id}`]) {
      await page.goto(path);
      expect(await horizontalOverflow(page), path).toBeLessThanOrEqual(0);
    }
    await page.goto("/console");
    // Stacked: each cell on its own line, its column's name shown above it.
    expect(
      await page.evaluate("getComputedStyle(document.querySelector('table.stack thead')).position"),
    ).toBe("absolute");
    const label = await page.evaluate(
      `getComputedStyle(document.querySelector('table.stack td[data-label="Run"]'), "::before").content`,
    );
    expect(label).toBe('"Run"');
    await page.screenshot({
      path: screenshotPath("console-pending-phone.png"),
      fullPage: true,
    });
    await context.close();
  });
});
