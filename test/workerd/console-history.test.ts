import { describe, expect, it, vi } from "vitest";
import { ConsoleClient, signedInOperator } from "./console-client";
import { asOperator, callTool, decide, openRun, refund, type TestRun } from "./helpers";

/** Waits until the runs index lists the run for this search (the ledger writes it without waiting). */
async function untilIndexed(run: TestRun, subject: string) {
  await vi.waitFor(
    async () => {
      const { body } = await asOperator(`/v1/runs?subject=${encodeURIComponent(subject)}&limit=100`);
      const runs = (body.data as { runs: Array<{ run_id: string }> }).runs;
      expect(runs.map((entry) => entry.run_id)).toContain(run.id);
    },
    { timeout: 5_000, interval: 50 },
  );
}

describe("the console's live updates", () => {
  it("serves its one script from its own origin, and the CSP allows nothing else", async () => {
    const visitor = new ConsoleClient();
    const script = await visitor.get("/console/assets/live.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(script.headers.get("cache-control")).toBe("public, max-age=300");
    expect(script.html).toContain("data-live");

    const client = await signedInOperator();
    const { headers, html } = await client.get("/console");
    const csp = headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="/console/assets/live.js" defer="">']);
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/);
    // Pages without live parts load no script at all.
    expect((await client.get("/console/approvals")).html).not.toContain("<script");
    expect((await client.get("/console?refresh=off")).html).not.toContain("<script");
  });

  it("renders the pending list alone as a fragment, the same markup the page shows", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1001", 160));
    const id = asked.body.approval?.id ?? "";
    const client = await signedInOperator();
    const fragment = await client.get("/console/fragments/pending");
    expect(fragment.status).toBe(200);
    expect(fragment.headers.get("content-type")).toMatch(/^text\/html/);
    expect(fragment.headers.get("cache-control")).toBe("no-store");
    expect(fragment.html).not.toMatch(/<html|<head|<nav/);
    expect(fragment.html).toContain(`href="/console/approvals/${id}"`);
    expect(fragment.html).toMatch(/Live · updated <time datetime="[^"]+">\d\d:\d\d:\d\d UTC<\/time>/);
    const table = /<table class="stack">[\s\S]*<\/table>/.exec(fragment.html)?.[0] ?? "";
    expect(table).toContain('data-label="Arguments"');
    const page = await client.get("/console");
    expect(page.html).toContain(table.slice(0, table.indexOf("<tbody>")));

    const visitor = new ConsoleClient();
    for (const path of ["/console/fragments/pending", "/console/fragments/runs"]) {
      const refused = await visitor.get(path);
      expect(refused.status, path).toBe(303);
      expect(refused.headers.get("location"), path).toBe("/console/sign-in");
    }
  });
});

describe("the console's history and runs", () => {
  it("shows every state in the approval history, with who decided, and filters it", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_destructive: 2 } });
    const rejected = (await callTool(run, "issue_refund", refund("A1004", 170))).body.approval?.id ?? "";
    const pending = (await callTool(run, "issue_refund", refund("A1005", 180))).body.approval?.id ?? "";
    await decide(rejected, "reject", "wrong order");
    const client = await signedInOperator();

    const { status, html } = await client.get(`/console/approvals?run_id=${run.id}`);
    expect(status).toBe(200);
    expect(html).toContain('<a href="/console/approvals" aria-current="page">Approval history</a>');
    expect(html).toContain(`href="/console/approvals/${rejected}"`);
    expect(html).toContain(`href="/console/approvals/${pending}"`);
    expect(html).toMatch(/badge-rejected/);
    expect(html).toMatch(/badge-pending/);
    expect(html).toContain("Dana Reyes");

    const filtered = await client.get(`/console/approvals?run_id=${run.id}&subject=A1005&state=`);
    expect(filtered.html).toContain(`href="/console/approvals/${pending}"`);
    expect(filtered.html).not.toContain(`href="/console/approvals/${rejected}"`);
    expect(filtered.html).toContain('value="A1005"');

    const paged = await client.get(`/console/approvals?run_id=${run.id}&limit=1`);
    const older = /<a href="([^"]+)" rel="next">/.exec(paged.html)?.[1]?.replaceAll("&amp;", "&") ?? "";
    expect(older).toMatch(/^\/console\/approvals\?run_id=run_[0-9a-f]+&limit=1&cursor=/);
    const second = await client.get(older);
    expect(second.html).toContain(`href="/console/approvals/${rejected}"`);
    expect(second.html).not.toContain(`href="/console/approvals/${pending}"`);
    expect(second.html).toContain("← Newest");

    const bad = await client.get("/console/approvals?since=last+week&limit=500");
    expect(bad.status).toBe(422);
    expect(bad.html).toContain('role="alert"');
    expect(bad.html).toContain("<strong>Created from</strong>: not an ISO 8601 date or date-time");
    expect(bad.html).toMatch(/<strong>limit<\/strong>: must be at most 100/);
  });

  it("finds the runs that named an order, live, and links each to its calls", async () => {
    const run = await openRun("acme");
    await callTool(run, "lookup_order", { order_id: "A1002" });
    await untilIndexed(run, "A1002");
    const client = await signedInOperator();

    const { status, html } = await client.get("/console/runs?subject=A1002");
    expect(status).toBe(200);
    expect(html).toContain('data-live="/console/fragments/runs?subject=A1002"');
    expect(html).toContain(`href="/console/runs/${run.id}"`);
    expect(html).toContain("<code>order_id=A1002</code>");
    expect(html).toContain('<script src="/console/assets/live.js" defer="">');

    const fragment = await client.get("/console/fragments/runs?subject=A1002");
    expect(fragment.html).not.toContain("<html");
    expect(fragment.html).toContain(`href="/console/runs/${run.id}"`);
    expect((await client.get("/console/runs?subject=C999")).html).toContain("No runs match.");

    const bad = await client.get("/console/runs?state=sleeping");
    expect(bad.status).toBe(422);
    expect(bad.html).toContain("is not an allowed value");
    expect(bad.html).not.toContain("data-live");
    expect((await client.get("/console/fragments/runs?state=sleeping")).status).toBe(422);
  });

  it("shows a run's calls with who made them, effects apart from checks, and the masked result", async () => {
    const run = await openRun("acme");
    await callTool(run, "get_customer_profile", { customer_id: "C101" });
    const asked = await callTool(run, "issue_refund", refund("A1003", 190));
    const approved = await decide(asked.body.approval?.id ?? "", "approve", "verified");
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);
    const client = await signedInOperator();

    const { html } = await client.get(`/console/runs/${run.id}`);
    expect(html).toContain('<a href="/console/runs" aria-current="page">Runs</a>');
    expect(html).toContain("<h2>Approvals</h2>");
    const executed = html.slice(html.indexOf('<li class="outcome-success by-operator">'));
    expect(executed).toMatch(/HTTP 201 · 1 effect · 1 check: HTTP 200/);
    expect(executed).toMatch(/<strong>Dana Reyes<\/strong> \(<code>operator:[0-9a-f]{12}<\/code>\)/);
    expect(executed).toContain('<pre class="result" tabindex="0">');
    // The profile's sensitive fields reach the page masked, as the model saw them.
    const profile = html.slice(html.indexOf('<span class="tool">get_customer_profile</span>'));
    const result = /<pre class="result" tabindex="0">([\s\S]*?)<\/pre>/.exec(profile)?.[1] ?? "";
    expect(result).toContain("&quot;customer_id&quot;: &quot;C101&quot;");
    expect(result).toMatch(/\*\*\*/);
  });
});

describe("a long run's page", () => {
  it("shows its calls a hundred at a time, with a link to the later ones", async () => {
    // initech: the load-test tenant, whose rate limits other tests' calls cannot reach.
    const run = await openRun("initech", { namespace: "support", limits: { max_calls: 150 } });
    const calls = 105;
    // Orders initech may name but the sandbox does not hold: each call is distinct, none repeats.
    const lookup = (n: number) => callTool(run, "lookup_order", { order_id: `I${5000 + n}` });
    // The first hundred in concurrent batches (their order within a batch is the ledger's), the
    // last five one by one, so the second page holds exactly those five.
    for (let batch = 0; batch < 100; batch += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, index) => lookup(batch + index)));
    }
    for (let n = 100; n < calls; n++) await lookup(n);
    const operator = await signedInOperator("initech");
    const first = await operator.get(`/console/runs/${run.id}`);
    expect(first.status).toBe(200);
    const entries = (html: string) => html.match(/<li class="[^"]*outcome-/g)?.length ?? 0;
    expect(entries(first.html)).toBe(100);
    const later = /href="(\/console\/runs\/[^"]+\?cursor=\d+)"/.exec(first.html)?.[1];
    expect(later).toBeDefined();
    const second = await operator.get(later?.replaceAll("&amp;", "&") ?? "");
    expect(entries(second.html)).toBe(calls - 100);
    expect(second.html).not.toContain("Later calls");
    expect(second.html).toContain("I5104");
  });
});
