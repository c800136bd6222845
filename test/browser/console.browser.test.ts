import { describe, expect, it } from "vitest";
import { browserStackFor, screenshotPath } from "./harness";

/** The parts of an envelope the agent side of this test reads. */
interface Envelope {
  outcome: string;
  replayed: boolean;
  data: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  approval: { id: string; state: string } | null;
}

const stack = browserStackFor();

async function agentCall(path: string, credential: string, body: unknown) {
  const response = await fetch(`${stack().proxy.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

/**
 * The dev server keeps its sandbox data between runs, so refunds add up on the demo orders. The
 * agent does what a careful one would: looks orders up and refunds one that still has money left.
 */
async function refundableOrder(run: { id: string; token: string }): Promise<string> {
  for (const orderId of ["A1001", "A1002", "A1003", "A1004", "A1005"]) {
    const looked = await agentCall(`/v1/runs/${run.id}/calls`, run.token, {
      tool: "lookup_order",
      args: { order_id: orderId },
    });
    const order = looked.body.data as { status?: string; refundable_cents?: number } | null;
    if (order && order.status !== "cancelled" && (order.refundable_cents ?? 0) >= 100) return orderId;
  }
  throw new Error("every demo order of acme is fully refunded; reset the sandbox state (.wrangler/state)");
}

describe("the operator console in a real browser", () => {
  it("lets an operator approve an agent's refund, which then executes once for the agent", async () => {
    const { browser, proxy } = stack();
    const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();

    // The agent: open a run, ask for a refund, get told to wait for a human.
    const opened = await agentCall("/v1/runs", "acme-demo-key", { namespace: "support" });
    expect(opened.status).toBe(201);
    const run = { id: String(opened.body.data?.run_id), token: String(opened.body.data?.run_token) };
    const orderId = await refundableOrder(run);
    const refund = {
      tool: "issue_refund",
      args: { order_id: orderId, amount_cents: 100, reason: "user_cancel" },
    };
    const asked = await agentCall(`/v1/runs/${run.id}/calls`, run.token, refund);
    expect(asked.status).toBe(409);
    expect(asked.body.error?.code).toBe("approval_required");
    const approvalId = asked.body.approval?.id ?? "";
    expect(approvalId).toMatch(/^apr_/);

    // Without a session the console sends the browser to sign in; a wrong key is refused there.
    await page.goto("/console");
    expect(new URL(page.url()).pathname).toBe("/console/sign-in");
    await page.getByLabel("Operator key").fill("acme-demo-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("not an operator key");
    expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain("__Host-console");

    await page.getByLabel("Operator key").fill("acme-operator-key");
    await page.getByLabel("Operator key").press("Enter");
    await page.waitForURL((url) => url.pathname === "/console");
    const session = (await context.cookies()).find((cookie) => cookie.name === "__Host-console");
    expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict", path: "/" });
    expect(session?.domain).toBe(new URL(proxy.url).hostname);

    // The pending list shows the refund with its arguments and run.
    const row = page
      .getByRole("row")
      .filter({ has: page.locator(`a[href="/console/approvals/${approvalId}"]`) });
    await expect.poll(() => row.count()).toBe(1);
    const rowText = (await row.textContent()) ?? "";
    expect(rowText).toContain("issue_refund");
    expect(rowText).toContain("destructive");
    expect(rowText).toContain(orderId);
    expect(rowText).toContain(run.id);
    await page.screenshot({ path: screenshotPath("console-pending.png"), fullPage: true });

    // Before the decision the run's trace has no operator entry.
    await page.goto(`/console/runs/${run.id}`);
    expect(await page.locator("ol.timeline > li").count()).toBeGreaterThan(0);
    expect(await page.locator("ol.timeline > li.by-operator").count()).toBe(0);

    // Open the approval, write a note, then reach the approve button by keyboard and press Enter.
    await page.goto("/console");
    await row.getByRole("link", { name: /Review/ }).click();
    await page.waitForURL((url) => url.pathname === `/console/approvals/${approvalId}`);
    await page.getByLabel("Note (optional)").fill("Customer called; verified the cancellation.");
    await page.keyboard.press("Tab");
    expect(await page.locator(":focus").textContent()).toBe("Approve and execute");
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.searchParams.get("decided") === "approve");
    expect(await page.getByRole("status").first().textContent()).toContain("The call executed once: success");
    await page.screenshot({ path: screenshotPath("console-approval.png"), fullPage: true });

    // The run's trace now holds the execution, attributed to this operator.
    await page.getByRole("link", { name: "See the run's trace" }).click();
    await page.waitForURL((url) => url.pathname === `/console/runs/${run.id}`);
    const executed = page.locator("ol.timeline > li.by-operator");
    expect(await executed.count()).toBe(1);
    const executedText = (await executed.textContent()) ?? "";
    expect(executedText).toContain("executed by operator approval");
    expect(executedText).toContain("issue_refund");
    expect(executedText).toMatch(/success/);
    expect(executedText).toMatch(/operator:[0-9a-f]{12}/);
    await page.screenshot({ path: screenshotPath("console-run.png"), fullPage: true });

    // The agent's identical retry gets the executed result from the ledger.
    const retried = await agentCall(`/v1/runs/${run.id}/calls`, run.token, refund);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ outcome: "success", replayed: true });
    expect(retried.body.approval).toMatchObject({ id: approvalId, state: "executed" });

    // Signing out deletes the session cookie; the console then asks for a key again.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL((url) => url.pathname === "/console/sign-in");
    expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain("__Host-console");
    await page.goto("/console");
    expect(new URL(page.url()).pathname).toBe("/console/sign-in");
    await context.close();
  });
});
