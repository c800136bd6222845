import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signSession } from "../../src/auth/console-session";
import { displayArgs } from "../../src/console/display-args";
import { formatLatency, formatSpan, formatTimestamp, formatUntil } from "../../src/console/format";
import { SESSION_TTL_MS } from "../../src/console/session";
import { toolValuesOf } from "../../src/console/tool-values";
import type { RunLedger } from "../../src/ledger/run-ledger";
import { catalog } from "../../src/tools";
import { ConsoleClient } from "./console-client";
import {
  asOperator,
  callTool,
  OPERATOR_KEYS,
  openRun,
  refund,
  refundsOfRun,
  sandboxRequests,
  type TestRun,
  traceOf,
} from "./helpers";

/** `operator:` and the first 12 hex of the key's SHA-256, computed here independently of the console's code. */
async function operatorIdOf(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return `operator:${[...digest]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 12)}`;
}

async function signIn(key: string) {
  const client = new ConsoleClient();
  await client.get("/console/sign-in");
  const response = await client.post("/console/sign-in", { csrf: client.csrf, key });
  return { client, response };
}

async function operator(tenant: keyof typeof OPERATOR_KEYS = "acme") {
  const { client, response } = await signIn(OPERATOR_KEYS[tenant]);
  expect(response.status).toBe(303);
  await client.get("/console");
  return client;
}

async function pendingRefund(run?: TestRun, order = "A1001", amount = 1000) {
  const agentRun = run ?? (await openRun("acme"));
  const asked = await callTool(agentRun, "issue_refund", refund(order, amount));
  expect(asked.body.error?.code).toBe("approval_required");
  return { run: agentRun, approvalId: asked.body.approval?.id ?? "" };
}

async function approvalState(approvalId: string) {
  const { body } = await asOperator(`/v1/approvals/${approvalId}`);
  return (body.data as { approval: { state: string } }).approval.state;
}

function sessionCookieOf(setCookies: string[]) {
  return setCookies.find((line) => line.startsWith("__Host-console="));
}

describe("console sign-in", () => {
  it("sets an HttpOnly, Secure, SameSite=Strict session cookie on Path=/ with no Domain", async () => {
    const { response } = await signIn(OPERATOR_KEYS.acme);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/console");
    const cookie = sessionCookieOf(response.setCookies);
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; Secure/i);
    expect(cookie).toMatch(/; SameSite=Strict/i);
    expect(cookie).toMatch(/; Path=\/(;|$)/);
    expect(cookie).not.toMatch(/Domain=/i);
    expect(cookie).toMatch(new RegExp(`Max-Age=${SESSION_TTL_MS / 1000}`));
  });

  it("serves pages that load nothing, cannot be framed and are never cached", async () => {
    const { headers, html } = await new ConsoleClient().get("/console/sign-in");
    expect(headers.get("content-type")).toMatch(/^text\/html/);
    expect(headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(headers.get("cache-control")).toBe("no-store");
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain('<label for="key">Operator key</label>');
    expect(html).not.toMatch(/<script|<link|https?:\/\//i);
  });

  it.each([
    ["a wrong key", () => Promise.resolve("not-an-operator-key")],
    ["a tenant key", () => Promise.resolve("acme-demo-key")],
    ["a run token", async () => (await openRun("acme")).token],
    ["an empty key", () => Promise.resolve("")],
  ])("refuses %s with 401, the form again and no session", async (_case, key) => {
    const { response } = await signIn(await key());
    expect(response.status).toBe(401);
    expect(response.html).toContain("That is not an operator key of any tenant.");
    expect(response.html).toContain('role="alert"');
    expect(response.html).toContain('name="key"');
    expect(sessionCookieOf(response.setCookies)).toBeUndefined();
  });

  it("refuses a sign-in form without its CSRF token (403) and opens no session", async () => {
    const client = new ConsoleClient();
    await client.get("/console/sign-in");
    const missing = await client.post("/console/sign-in", { key: OPERATOR_KEYS.acme });
    expect(missing.status).toBe(403);
    expect(sessionCookieOf(missing.setCookies)).toBeUndefined();
    const noCookie = new ConsoleClient();
    const forged = await noCookie.post("/console/sign-in", { key: OPERATOR_KEYS.acme, csrf: "x".repeat(43) });
    expect(forged.status).toBe(403);
    expect(sessionCookieOf(forged.setCookies)).toBeUndefined();
  });

  it("sends a visitor without a session to the sign-in page", async () => {
    const visitor = new ConsoleClient();
    for (const path of [
      "/console",
      "/console/approvals/apr_0123456789abcdef01234567",
      "/console/runs/run_1",
    ]) {
      const response = await visitor.get(path);
      expect(response.status, path).toBe(303);
      expect(response.headers.get("location"), path).toBe("/console/sign-in");
    }
    const { run, approvalId } = await pendingRefund();
    const post = await visitor.post(`/console/approvals/${approvalId}/approve`, { csrf: "x".repeat(43) });
    expect(post.status).toBe(303);
    expect(post.headers.get("location")).toBe("/console/sign-in");
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it("treats a forged, expired, foreign or revoked session as none, and clears it", async () => {
    const keys = JSON.parse(env.RUN_TOKEN_KEYS) as string[];
    const acmeOperator = await operatorIdOf(OPERATOR_KEYS.acme);
    const valid = { tenant: "acme", operator: acmeOperator, csrf: "c".repeat(43) };
    const good = await signSession({ ...valid, exp: Date.now() + 60_000 }, keys);
    const cases = {
      "a run token": (await openRun("acme")).token,
      "an expired session": await signSession({ ...valid, exp: Date.now() - 1 }, keys),
      "a tampered session": `${good.slice(0, -2)}${good.endsWith("AA") ? "BB" : "AA"}`,
      "a session of a removed operator key": await signSession(
        { ...valid, operator: "operator:000000000000", exp: Date.now() + 60_000 },
        keys,
      ),
      "another tenant named in an acme operator's session": await signSession(
        { ...valid, tenant: "globex", exp: Date.now() + 60_000 },
        keys,
      ),
    };
    for (const [name, token] of Object.entries(cases)) {
      const client = new ConsoleClient();
      client.cookies.set("__Host-console", token);
      const response = await client.get("/console");
      expect(response.status, name).toBe(303);
      expect(response.headers.get("location"), name).toBe("/console/sign-in");
      expect(sessionCookieOf(response.setCookies), name).toMatch(/Max-Age=0/);
    }
    const control = new ConsoleClient();
    control.cookies.set("__Host-console", good);
    expect((await control.get("/console")).status).toBe(200);
  });

  it("signs out only with the session's CSRF token, and then deletes the cookie", async () => {
    const client = await operator();
    expect((await client.post("/console/sign-out", {})).status).toBe(403);
    expect((await client.get("/console")).status).toBe(200);
    const out = await client.post("/console/sign-out", { csrf: client.csrf });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/console/sign-in?signed_out=1");
    expect(sessionCookieOf(out.setCookies)).toMatch(/Max-Age=0/);
    expect((await client.get("/console")).status).toBe(303);
  });
});

describe("console approvals", () => {
  it("lists a pending approval the agent's call opened, with tool, side effect, arguments, run and age", async () => {
    const { run, approvalId } = await pendingRefund();
    const client = await operator();
    const { status, html } = await client.get("/console");
    expect(status).toBe(200);
    expect(html).not.toContain('http-equiv="refresh"');
    expect(html).toContain('data-live="/console/fragments/pending"');
    const row = html.slice(html.indexOf(`/console/approvals/${approvalId}`) - 2000);
    expect(html).toContain(`href="/console/approvals/${approvalId}"`);
    expect(row).toContain("<code>issue_refund</code>");
    expect(row).toContain("destructive");
    expect(row).toMatch(/<dt>order_id<\/dt><dd>A1001<\/dd>/);
    expect(row).toMatch(/<dt>amount_cents<\/dt><dd><data value="1000">\$10\.00<\/data><\/dd>/);
    expect(row).toContain(`href="/console/runs/${run.id}"`);
    expect(row).toMatch(/just now|\d+ s ago/);
    const paused = await client.get("/console?refresh=off");
    expect(paused.html).not.toContain("data-live");
  });

  it("tells the operator what the tool's dry run cannot show, from its declaration", async () => {
    const { approvalId } = await pendingRefund(undefined, "A1002", 1000);
    const client = await operator();
    const { status, html } = await client.get(`/console/approvals/${approvalId}`);
    expect(status).toBe(200);
    const declared = catalog.find("support", "issue_refund")?.dry_run ?? "";
    expect(declared).toContain("only production reveals");
    expect(html).toContain("<dt>What a dry run cannot show</dt>");
    expect(html).toContain(`<dd class="dry-run">${declared}</dd>`);
  });

  it("refuses a decision posted without the session's CSRF token (403) and executes nothing", async () => {
    const { run, approvalId } = await pendingRefund(undefined, "A1002", 1000);
    const client = await operator();
    const other = await operator();
    expect(other.csrf).not.toBe(client.csrf);
    const forged: Array<Record<string, string>> = [
      {},
      { csrf: "" },
      { csrf: "x".repeat(43) },
      { csrf: other.csrf },
    ];
    for (const form of forged) {
      const response = await client.post(`/console/approvals/${approvalId}/approve`, form);
      expect(response.status, JSON.stringify(form)).toBe(403);
      expect(response.html).toContain("security token is missing or does not match");
    }
    expect(await sandboxRequests(run.id)).toEqual([]);
    expect(await refundsOfRun("A1002", run)).toEqual([]);
    expect(await approvalState(approvalId)).toBe("pending");
  });

  it("executes an approved call exactly once, as the operator, and shows the outcome", async () => {
    const { run, approvalId } = await pendingRefund(undefined, "A1001", 900);
    const client = await operator();
    const detail = await client.get(`/console/approvals/${approvalId}`);
    expect(detail.html).toContain("Approve and execute");
    // Other tests of this file refund A1001 in other runs: the operator confirms they saw them.
    const approved = await client.post(`/console/approvals/${approvalId}/approve`, {
      csrf: client.csrf,
      reason: "Customer called; verified.",
      confirm_duplicate: "yes",
    });
    expect(approved.status).toBe(303);
    expect(approved.headers.get("location")).toBe(`/console/approvals/${approvalId}?decided=approve`);
    const outcome = await client.get(approved.headers.get("location") ?? "");
    expect(outcome.html).toContain("The call executed once: <strong>success</strong>");
    expect(outcome.html).not.toContain("Approve and execute");

    // A second post (a double click, a resubmitted form) decides nothing new and executes nothing.
    const again = await client.post(`/console/approvals/${approvalId}/approve`, { csrf: client.csrf });
    expect(again.status).toBe(303);
    expect(await refundsOfRun("A1001", run)).toHaveLength(1);
    expect((await sandboxRequests(run.id)).filter((entry) => entry.path === "/refunds")).toHaveLength(1);

    const byOperator = (await traceOf(run)).filter((entry) => String(entry.actor).startsWith("operator:"));
    expect(byOperator).toEqual([
      expect.objectContaining({ actor: await operatorIdOf(OPERATOR_KEYS.acme), outcome: "success" }),
    ]);
    const retry = await callTool(run, "issue_refund", refund("A1001", 900));
    expect(retry.body).toMatchObject({ outcome: "success", replayed: true });
    expect(await refundsOfRun("A1001", run)).toHaveLength(1);
  });

  it("needs a reason to reject, then tells the agent and executes nothing", async () => {
    const { run, approvalId } = await pendingRefund(undefined, "A1003", 500);
    const client = await operator();
    const bare = await client.post(`/console/approvals/${approvalId}/reject`, {
      csrf: client.csrf,
      reason: " ",
    });
    expect(bare.status).toBe(422);
    expect(bare.html).toContain("A rejection needs a reason");
    expect(await approvalState(approvalId)).toBe("pending");
    const rejected = await client.post(`/console/approvals/${approvalId}/reject`, {
      csrf: client.csrf,
      reason: "Order A1003 was already refunded by phone.",
    });
    expect(rejected.status).toBe(303);
    const shown = await client.get(rejected.headers.get("location") ?? "");
    expect(shown.html).toContain("Rejected by");
    const after = await callTool(run, "issue_refund", refund("A1003", 500));
    expect(after.body.error?.code).toBe("approval_rejected");
    expect(after.body.error?.message).toContain("Order A1003 was already refunded by phone.");
    // Only the approval page's read of the order reached the sandbox: nothing was refunded.
    expect((await sandboxRequests(run.id)).map((entry) => `${entry.method} ${entry.tool}`)).toEqual(
      (await sandboxRequests(run.id)).map(() => "GET lookup_order"),
    );
  });

  it("keeps another tenant's operator from seeing or deciding acme's approvals and runs", async () => {
    const { run, approvalId } = await pendingRefund(undefined, "A1004", 300);
    const globex = await operator("globex");
    expect((await globex.get("/console")).html).not.toContain(approvalId);
    const detail = await globex.get(`/console/approvals/${approvalId}`);
    expect(detail.status).toBe(404);
    expect(detail.html).not.toContain("A1004");
    const decided = await globex.post(`/console/approvals/${approvalId}/approve`, { csrf: globex.csrf });
    expect(decided.status).toBe(404);
    expect((await globex.get(`/console/runs/${run.id}`)).status).toBe(404);
    expect(await sandboxRequests(run.id)).toEqual([]);
    expect(await approvalState(approvalId)).toBe("pending");
  });

  it("shows an expired approval's refusal as a readable message, never a stack", async () => {
    const { run, approvalId } = await pendingRefund(undefined, "A1005", 200);
    const stub = env.RUN_LEDGER.get(
      env.RUN_LEDGER.idFromName(`acme/${run.id}`),
    ) as DurableObjectStub<RunLedger>;
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE approvals SET expires_at = ? WHERE id = ?", Date.now() - 1, approvalId);
    });
    const client = await operator();
    const { status, headers, html } = await client.post(`/console/approvals/${approvalId}/approve`, {
      csrf: client.csrf,
    });
    expect(status).toBe(409);
    expect(headers.get("content-type")).toMatch(/^text\/html/);
    expect(html).toContain(
      "This approval can no longer be granted: nobody decided within the approval window.",
    );
    expect(html).not.toMatch(/\bat \S+ \(|Error:|\.ts:\d+/);
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it("shows a budget refusal as a readable message and executes nothing more", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_destructive: 1 } });
    const first = await pendingRefund(run, "A1002", 111);
    const second = await pendingRefund(run, "A1002", 112);
    const client = await operator();
    // Other tests of this file refund A1002 in other runs: the operator confirms they saw them.
    const confirmed = { csrf: client.csrf, confirm_duplicate: "yes" };
    expect((await client.post(`/console/approvals/${first.approvalId}/approve`, confirmed)).status).toBe(303);
    const refused = await client.post(`/console/approvals/${second.approvalId}/approve`, confirmed);
    expect(refused.status).toBe(409);
    expect(refused.html).toContain("max_destructive");
    expect((await refundsOfRun("A1002", run)).map((entry) => entry.amount_cents)).toEqual([111]);
  });

  it("escapes arguments, so an agent's text cannot inject markup into the page", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "create_internal_ticket", {
      customer_id: "C101",
      priority: "urgent",
      summary: '<script>alert("x")</script><img src=x onerror=alert(1)>',
    });
    const approvalId = asked.body.approval?.id ?? "";
    expect(approvalId).not.toBe("");
    const client = await operator();
    const { html } = await client.get(`/console/approvals/${approvalId}`);
    expect(html).toContain(
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;",
    );
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img");
  });

  it("answers an unknown approval or page with a 404 page", async () => {
    const client = await operator();
    expect((await client.get("/console/approvals/apr_000000000000000000000000")).status).toBe(404);
    expect((await client.get("/console/approvals/not-an-id")).status).toBe(404);
    const missing = await client.get("/console/nothing-here");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/^text\/html/);
  });
});

describe("console run page", () => {
  it("renders the run's trace as a timeline with outcomes, latencies and the operator's execution", async () => {
    const run = await openRun("acme");
    await callTool(run, "lookup_order", { order_id: "A1003" });
    const { approvalId } = await pendingRefund(run, "A1003", 150);
    const client = await operator();
    const before = await client.get(`/console/runs/${run.id}`);
    expect(before.status).toBe(200);
    expect(before.html).not.toContain("executed by operator approval");
    await client.post(`/console/approvals/${approvalId}/approve`, { csrf: client.csrf });

    const { html } = await client.get(`/console/runs/${run.id}`);
    const trace = await traceOf(run);
    const items = html.match(/<li class="outcome-[a-z_]+( by-operator)?">/g) ?? [];
    expect(items).toHaveLength(trace.length);
    expect(html).toContain('<ol class="timeline"');
    expect(html).toContain('<span class="tool">lookup_order</span>');
    expect(html).toContain("<code>approval_required</code>");
    expect(html).toMatch(/\d+ ms/);
    const operatorItems = items.filter((item) => item.includes("by-operator"));
    expect(operatorItems).toEqual(['<li class="outcome-success by-operator">']);
    expect(html).toContain(`<code>${await operatorIdOf(OPERATOR_KEYS.acme)}</code>`);
    expect(html).toContain("executed by operator approval");
  });
});

describe("console formatting", () => {
  it("shows arguments field by field: strings as they are, everything else as JSON", () => {
    expect(
      displayArgs(
        "create_internal_ticket",
        { summary: "a <b>", priority: null, tags: ["x"], n: 1 },
        new Map(),
      ),
    ).toEqual([
      { field: "summary", value: "a <b>" },
      { field: "priority", value: "null" },
      { field: "tags", value: '["x"]' },
      { field: "n", value: "1" },
    ]);
    expect(displayArgs(null, null, new Map())).toEqual([]);
    expect(displayArgs(null, "raw", new Map())).toEqual([{ field: "(arguments)", value: "raw" }]);
  });

  it("shows a tool's declared value field as money in its currency, and nothing else", () => {
    const money = toolValuesOf(["support"]);
    expect(money.get("issue_refund")).toEqual({ field: "amount_cents", currency: "USD" });
    expect(displayArgs("issue_refund", { order_id: "A1", amount_cents: 700, note: 5 }, money)).toEqual([
      { field: "order_id", value: "A1" },
      { field: "amount_cents", value: "$7.00", exact: "700" },
      { field: "note", value: "5" },
    ]);
    // Not an integer of minor units (masked, or malformed): shown as it is, never guessed at.
    expect(displayArgs("issue_refund", { amount_cents: "***" }, money)).toEqual([
      { field: "amount_cents", value: "***" },
    ]);
    expect(displayArgs("issue_refund", { amount_cents: 7.5 }, money)).toEqual([
      { field: "amount_cents", value: "7.5" },
    ]);
    // The same field of a tool that declares no value stays a number.
    expect(displayArgs("lookup_order", { amount_cents: 700 }, money)).toEqual([
      { field: "amount_cents", value: "700" },
    ]);
    expect(
      displayArgs(
        "issue_refund",
        { amount_cents: 1999 },
        new Map([["issue_refund", { field: "amount_cents", currency: "JPY" }]]),
      ),
    ).toEqual([{ field: "amount_cents", value: "¥1,999", exact: "1999" }]);
  });

  it("reads spans and latencies at a glance", () => {
    expect(formatSpan(42_500)).toBe("42 s");
    expect(formatSpan(5 * 60_000 + 1)).toBe("5 min");
    expect(formatSpan(3 * 3_600_000 + 10 * 60_000)).toBe("3 h 10 min");
    expect(formatSpan(2 * 86_400_000 + 4 * 3_600_000)).toBe("2 d 4 h");
    expect(formatSpan(-5)).toBe("0 s");
    expect(formatLatency(null)).toBe("—");
    expect(formatLatency(43.4)).toBe("43 ms");
    expect(formatLatency(1_240)).toBe("1.24 s");
    expect(formatUntil("2026-01-01T00:00:00Z", Date.parse("2026-01-01T00:00:01Z"))).toBe("expired");
    expect(formatTimestamp("2026-05-01T12:01:03.120Z")).toBe("2026-05-01 12:01:03 UTC");
  });
});
