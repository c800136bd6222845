import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { zeroCounts } from "../../src/metrics/events";
import { ConsoleClient, signedInOperator } from "./console-client";
import { callTool, openRun } from "./helpers";

const HOUR = 3_600_000;

describe("the console's agent health page", () => {
  it("charts the last 24 hours per namespace and marks what got worse than yesterday", async () => {
    const store = env.METRICS_STORE;
    if (!store) throw new Error("the sandbox binds METRICS_STORE");
    // Yesterday, written at the source: a calm day of ten successful calls.
    const yesterday = Math.floor((Date.now() - 30 * HOUR) / 60_000);
    await store.get(store.idFromName("acme")).record([
      {
        minute: yesterday,
        namespace: "support",
        tool: "lookup_order",
        counts: { ...zeroCounts(), calls: 10, succeeded: 10 },
      },
    ]);
    // Today, through the proxy: an agent that loops.
    const run = await openRun("acme");
    for (let attempt = 0; attempt < 3; attempt++) await callTool(run, "lookup_order", { order_id: "A1005" });

    const operator = await signedInOperator("acme");
    const page = await vi.waitFor(
      async () => {
        const { status, html } = await operator.get("/console/health");
        expect(status).toBe(200);
        expect(html).toMatch(/<tr class="worse"><th scope="row">Loops<\/th>/);
        return html;
      },
      { timeout: 15_000, interval: 250 },
    );
    expect(page).toContain("Worse than yesterday in <code>support</code>");
    expect(page).toMatch(/<tr class="worse"><th scope="row">Success rate<\/th><td>100 %<\/td>/);
    expect(page).toMatch(/<svg viewBox="0 0 320 132" width="100%" role="img"/);
    expect(page).toMatch(/<rect [^>]*fill="#0b57d0"><title>\d\d:00 UTC · calls: \d+<\/title><\/rect>/);
    expect(page).toMatch(/<path d="M[\d. ML]+"/);
    expect(page).not.toMatch(/<script/i);
  });

  it("lists each upstream the tenant's tools reach: whether it applies a key once, and on what evidence", async () => {
    const operator = await signedInOperator("acme");
    const { status, html } = await operator.get("/console/health");
    expect(status).toBe(200);
    expect(html).toContain("Upstreams and idempotency keys");
    const row = (upstream: string) =>
      new RegExp(`<td><code>${upstream}</code></td><td>([^<]*)</td><td>([^<]*)</td>`).exec(html)?.slice(1);
    expect(row("support.PAYMENTS_API")?.[0]).toMatch(/^applies a key once: certified \d{4}-\d\d-\d\d$/);
    expect(row("support.PAYMENTS_API")?.[1]).toBe("a write in doubt is resent under its key");
    expect(row("support.ORDERS_API")).toEqual([
      "applies a key once: declared, not certified",
      "a read is never in doubt",
    ]);
    expect(row("support.EMAIL_API")?.[0]).toBe("applies a key once: declared, not certified");
  });

  it("sends a visitor without a session to sign in", async () => {
    const { status, headers } = await new ConsoleClient().get("/console/health");
    expect(status).toBe(303);
    expect(headers.get("location")).toBe("/console/sign-in");
  });
});
