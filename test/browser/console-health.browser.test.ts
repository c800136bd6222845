import { describe, expect, it } from "vitest";
import { browserStackFor, horizontalOverflow, screenshotPath, signIn } from "./harness";

const PHONE = { width: 390, height: 844 };

/** The parts of an envelope this test reads. */
interface Envelope {
  outcome: string;
  data: Record<string, unknown> | null;
  error: { code: string } | null;
}

const stack = browserStackFor();

async function api(path: string, credential: string, body: unknown) {
  const response = await fetch(`${stack().proxy.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await response.json()) as Envelope;
}

describe("the agent health page in a real browser", () => {
  it("charts an agent's calls, its loop and its invalid call, and fits a phone", async () => {
    const { browser, proxy } = stack();

    // An agent that reads, gets its arguments wrong once, then loops on the same read.
    const opened = await api("/v1/runs", "acme-demo-key", { namespace: "support" });
    const run = { id: String(opened.data?.run_id), token: String(opened.data?.run_token) };
    const call = (args: Record<string, unknown>) =>
      api(`/v1/runs/${run.id}/calls`, run.token, { tool: "lookup_order", args });
    const answers = [await call({ order_id: "A1001" }), await call({ orderId: "A1001" })];
    for (let attempt = 0; attempt < 3; attempt++) answers.push(await call({ order_id: "A1002" }));
    expect(answers.map((answer) => answer.error?.code ?? answer.outcome)).toEqual([
      "success",
      "validation_error",
      "success",
      "success",
      "repeat_detected",
    ]);

    const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page);
    // The proxy's state folder is fresh, so these five calls are all the tenant has made.
    // acme's agents work in more than one namespace: the five calls are support's.
    const support = page.getByRole("region", { name: "Namespace support" });
    const calls = support.getByRole("figure", { name: /Calls per hour/ });
    await expect
      .poll(
        async () => {
          await page.goto("/console/health");
          return calls.textContent();
        },
        { timeout: 20_000, interval: 500 },
      )
      .toContain("5 calls in the last 24 h");

    expect(await page.locator("h1").textContent()).toBe("Agent health");
    expect(await calls.locator("svg rect[fill]").count()).toBeGreaterThan(0);
    expect(await calls.locator("svg rect title").first().textContent()).toMatch(/^\d\d:00 UTC · calls: 5$/);
    const success = support.getByRole("figure", { name: /Success rate/ });
    expect(await success.locator("svg circle").count()).toBeGreaterThan(0);
    expect(await success.textContent()).toContain("60 % succeeded");
    expect(await support.getByRole("figure", { name: /Invalid-call rate/ }).textContent()).toContain(
      "20 % invalid",
    );
    expect(await support.getByRole("figure", { name: /Escalations and loops/ }).textContent()).toContain(
      "1 loop refused by the repeat breaker",
    );
    // Nothing happened yesterday: no baseline, so today's loop is not called worse than nothing.
    const loops = support.getByRole("row", { name: /^Loops/ });
    expect(await loops.getAttribute("class")).toBeNull();
    expect(await loops.textContent()).toBe("Loopsno data1");
    expect(await page.locator("main").textContent()).toMatch(/No baseline yet in .*support/);
    await page.screenshot({ path: screenshotPath("console-health.png"), fullPage: true });

    await page.setViewportSize(PHONE);
    await page.goto("/console/health");
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    const chartWidth = await calls.locator("svg").evaluate((svg) => svg.getBoundingClientRect().width);
    expect(chartWidth).toBeGreaterThan(250);
    expect(chartWidth).toBeLessThanOrEqual(PHONE.width);
    await page.screenshot({
      path: screenshotPath("console-health-phone.png"),
      fullPage: true,
    });
    await context.close();
  });
});
