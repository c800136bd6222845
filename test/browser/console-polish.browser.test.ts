import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { browserStackFor, screenshotPath, signIn } from "./harness";

/** A loopback callback nothing listens on: the test only reads the consent page. */
const REDIRECT_URI = "http://127.0.0.1:39918/callback";

/** The parts of an envelope this test reads. */
interface Envelope {
  outcome: string;
  data: Record<string, unknown> | null;
  error: { code: string } | null;
  approval: { id: string } | null;
  replayed?: boolean;
}

const stack = browserStackFor();

async function api(path: string, credential: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${stack().proxy.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${credential}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return (await response.json()) as Envelope;
}

/** An agent's run of a tenant: opened with its demo key, called with its run token. */
async function agentRun(tenantKey = "acme-demo-key") {
  const opened = await api("/v1/runs", tenantKey, { namespace: "support" });
  const run = { id: String(opened.data?.run_id), token: String(opened.data?.run_token) };
  return {
    id: run.id,
    call: (tool: string, args: Record<string, unknown>, headers: Record<string, string> = {}) =>
      api(`/v1/runs/${run.id}/calls`, run.token, { tool, args }, headers),
  };
}

/** The row of a list that links to an approval, as a person reads it. */
function approvalRow(page: Page, approvalId: string) {
  return page.getByRole("row").filter({ has: page.locator(`a[href="/console/approvals/${approvalId}"]`) });
}

describe("the console's polish in a real browser", () => {
  it("reads money in its currency and flags possible duplicates on the pending list, in history and on the run page", async () => {
    const { browser, proxy } = stack();
    const refund = { order_id: "A1002", amount_cents: 700, reason: "user_cancel" };
    const first = await agentRun();
    const second = await agentRun();
    const asked = [await first.call("issue_refund", refund), await second.call("issue_refund", refund)];
    expect(asked.map((envelope) => envelope.error?.code)).toEqual(["approval_required", "approval_required"]);
    const [firstId = "", secondId = ""] = asked.map((envelope) => envelope.approval?.id ?? "");

    const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page);

    // Waiting for you: $7.00, not 700; each flagged as the other's possible duplicate.
    const pendingRow = approvalRow(page, secondId);
    const pendingText = (await pendingRow.textContent()) ?? "";
    expect(pendingText).toContain("$7.00");
    expect(pendingText).not.toMatch(/amount_cents\s*700/);
    expect(pendingText).toContain("Possible duplicate: another run asked for exactly this");
    expect(await pendingRow.locator("data").getAttribute("value")).toBe("700");

    // History: the same row reads the same.
    await page.getByRole("link", { name: "Approval history", exact: true }).click();
    await page.waitForURL((url) => url.pathname === "/console/approvals");
    for (const id of [firstId, secondId]) {
      const row = approvalRow(page, id);
      const text = (await row.textContent()) ?? "";
      expect(text).toContain("$7.00");
      expect(text).toContain("Possible duplicate: another run asked for exactly this");
    }
    await page.screenshot({ path: screenshotPath("console-history-duplicates.png"), fullPage: true });

    // The run page: its approval and its call's arguments in dollars.
    await page.goto(`/console/runs/${first.id}`);
    expect(await approvalRow(page, firstId).textContent()).toContain("$7.00");
    expect(await page.locator("ol.timeline > li").first().textContent()).toContain("$7.00");
    await context.close();
  });

  it("calls a read a read, and a write the upstream answered 429 no effect", async () => {
    const { browser, proxy } = stack();
    const reader = await agentRun();
    expect((await reader.call("lookup_order", { order_id: "A1001" })).outcome).toBe("success");
    // globex lets small refunds through without an operator; its upstream rate-limits this one.
    const writer = await agentRun("globex-demo-key");
    const refund = { order_id: "B2001", amount_cents: 120, reason: "user_cancel" };
    const limited = await writer.call("issue_refund", refund, {
      "x-sandbox-fault": "rate_limited",
      "x-sandbox-fault-retry-after": "0",
    });
    expect(limited.error?.code).toBe("rate_limited");

    const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page);
    await page.goto(`/console/runs/${reader.id}`);
    const read = (await page.locator("ol.timeline > li").first().textContent()) ?? "";
    expect(read).toContain("HTTP 200 · read");
    expect(read).not.toContain("effect");
    await page.screenshot({ path: screenshotPath("console-run-read.png"), fullPage: true });

    await context.close();

    // The writer's run belongs to globex: its operator reads it in a session of their own.
    const globex = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const globexPage = await globex.newPage();
    await signIn(globexPage, "globex-operator-key");
    await globexPage.goto(`/console/runs/${writer.id}`);
    const refused = (await globexPage.locator("ol.timeline > li").first().textContent()) ?? "";
    expect(refused).toContain("HTTP 429 · no effect (1 attempt refused)");
    expect(refused).not.toContain("1 effect");
    await globex.close();
  });

  it("says 'no baseline yet' on a first day of health, in the singular where it counts one", async () => {
    const { browser, proxy } = stack();
    // An agent that loops on one read: the state folder is fresh, so yesterday has no data.
    const run = await agentRun();
    const answers = [];
    for (let attempt = 0; attempt < 3; attempt++)
      answers.push(await run.call("lookup_order", { order_id: "A1003" }));
    expect(answers.at(-1)?.error?.code).toBe("repeat_detected");

    const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page);
    const support = page.getByRole("region", { name: "Namespace support" });
    const loopsChart = support.getByRole("figure", { name: /Escalations and loops/ });
    await expect
      .poll(
        async () => {
          await page.goto("/console/health");
          return loopsChart.textContent();
        },
        { timeout: 20_000, interval: 500 },
      )
      .toContain("1 loop refused by the repeat breaker");
    const main = (await page.locator("main").textContent()) ?? "";
    expect(main).not.toContain("Worse than yesterday");
    expect(main).toMatch(/No baseline yet in .*support/);
    const loops = support.getByRole("row", { name: /^Loops/ });
    expect(await loops.getAttribute("class")).toBeNull();
    expect(await loops.textContent()).toBe("Loopsno data1");
    expect(await support.getByRole("figure", { name: /Replays/ }).textContent()).toMatch(
      /\d+ answers? served from the ledger/,
    );
    expect(main).not.toMatch(/\b1 (answers|effects|calls|loops|escalations|approvals)\b/);
    await page.screenshot({ path: screenshotPath("console-health-no-baseline.png"), fullPage: true });
    await context.close();
  });

  it("tells the operator on the consent page how long the grant lasts", async () => {
    const { browser, proxy } = stack();
    const registered = await fetch(`${proxy.url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Lifetime test client",
        application_type: "native",
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      }),
    });
    expect(registered.status).toBe(201);
    const clientId = String(((await registered.json()) as { client_id: string }).client_id);
    const authorize = `/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      state: "lifetime",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    })}`;
    const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page);
    await page.goto(authorize);
    expect(new URL(page.url()).pathname).toBe("/authorize");
    const lasts = page.locator("dd.grant-lifetime");
    expect((await lasts.textContent())?.replace(/\s+/g, " ")).toBe(
      "30 days: each access token is good for 1 hour, and the application renews it with its refresh token until the grant ends, 30 days after you allow it. Then an operator must allow it again.",
    );
    expect(await page.locator("main").textContent()).not.toMatch(/\b1 (calls|writes|destructive calls)\b/);
    await page.screenshot({ path: screenshotPath("oauth-consent-lifetime.png"), fullPage: true });
    await context.close();
  });
});
