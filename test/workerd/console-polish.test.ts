import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { plural } from "../../src/console/plural";
import { zeroCounts } from "../../src/metrics/events";
import { type ConsoleClient, signedInOperator } from "./console-client";
import { armFault, callTool, deliverUncalledRun, namespacesOf, openRun, type TestRun } from "./helpers";
import { json, pkcePair, REDIRECT_URI } from "./oauth-client";

/** The `<li>` of a run page's timeline for one call, by its sequence number. */
function entryOf(html: string, seq: number): string {
  const start = html.indexOf(`<span class="seq">#${seq}</span>`);
  expect(start, `no call #${seq} on the page`).toBeGreaterThan(-1);
  const end = html.indexOf("</li>", start);
  return html.slice(start, end);
}

/** The table row that links to an approval. */
function rowOf(html: string, approvalId: string): string {
  const link = html.indexOf(`/console/approvals/${approvalId}"`);
  expect(link, `no row for ${approvalId}`).toBeGreaterThan(-1);
  return html.slice(html.lastIndexOf("<tr>", link), html.indexOf("</tr>", link));
}

/** A refund the acme tenant's policy holds for an operator: the approval's id. */
async function heldRefund(run: TestRun, orderId: string, amountCents: number): Promise<string> {
  const asked = await callTool(run, "issue_refund", {
    order_id: orderId,
    amount_cents: amountCents,
    reason: "user_cancel",
  });
  expect(asked.body.error?.code).toBe("approval_required");
  return String(asked.body.approval?.id);
}

describe("the console reads money in its currency wherever arguments are shown", () => {
  it("on the pending list, in history, and on the run page: the tool's value field as $7.00, the cents kept", async () => {
    const run = await openRun("acme");
    const approvalId = await heldRefund(run, "A1003", 700);
    const operator = await signedInOperator("acme");
    const money = /<dt>amount_cents<\/dt><dd><data value="700">\$7\.00<\/data><\/dd>/;

    const pending = await operator.get("/console");
    expect(rowOf(pending.html, approvalId)).toMatch(money);
    expect(pending.html).not.toMatch(/<dd>700<\/dd>/);
    const fragment = await operator.get("/console/fragments/pending");
    expect(rowOf(fragment.html, approvalId)).toMatch(money);
    const history = await operator.get(`/console/approvals?run_id=${run.id}`);
    expect(rowOf(history.html, approvalId)).toMatch(money);
    const runPage = await operator.get(`/console/runs/${run.id}`);
    expect(rowOf(runPage.html, approvalId)).toMatch(money);
    expect(entryOf(runPage.html, 1)).toMatch(money);
    const approvalPage = await operator.get(`/console/approvals/${approvalId}`);
    expect(approvalPage.html).toMatch(/<dt>amount_cents<\/dt><dd><data value="700">\$7\.00<\/data><\/dd>/);
    // An argument that is not the declared value field stays as the call carries it.
    expect(rowOf(history.html, approvalId)).toMatch(/<dt>order_id<\/dt><dd>A1003<\/dd>/);
  });
});

describe("the console flags possible duplicates in history as on the pending list", () => {
  it("marks both runs' identical refunds in history, and not a refund of another amount", async () => {
    const first = await heldRefund(await openRun("acme"), "A1004", 450);
    const second = await heldRefund(await openRun("acme"), "A1004", 450);
    const other = await heldRefund(await openRun("acme"), "A1004", 451);
    const operator = await signedInOperator("acme");
    const flag = "⚠ Possible duplicate: another run asked for exactly this";

    const pending = await operator.get("/console");
    const history = await operator.get("/console/approvals?subject=A1004");
    for (const html of [pending.html, history.html]) {
      expect(rowOf(html, first)).toContain(flag);
      expect(rowOf(html, second)).toContain(flag);
      expect(rowOf(html, other)).not.toContain("Possible duplicate");
    }
  });
});

describe("the run page never calls a read or a refused attempt an effect", () => {
  it("says 'read' of a read, and 'no effect' of a write the upstream answered 429", async () => {
    const reader = await openRun("acme");
    expect((await callTool(reader, "lookup_order", { order_id: "A1001" })).body.outcome).toBe("success");
    const acme = await signedInOperator("acme");
    const read = entryOf((await acme.get(`/console/runs/${reader.id}`)).html, 1);
    expect(read).toContain("<dd>HTTP 200 · read</dd>");
    expect(read).not.toContain("effect");

    // globex lets small refunds through without an operator; its upstream rate-limits this one.
    const writer = await openRun("globex");
    await armFault(writer.id, { mode: "rate_limited", path_prefix: "/refunds", retry_after_s: 0 });
    const limited = await callTool(writer, "issue_refund", {
      order_id: "B2001",
      amount_cents: 120,
      reason: "user_cancel",
    });
    expect(limited.body.error?.code).toBe("rate_limited");
    const globex = await signedInOperator("globex");
    const refused = entryOf((await globex.get(`/console/runs/${writer.id}`)).html, 1);
    expect(refused).toMatch(
      /<dd>HTTP 429 · no effect \(1 attempt refused\)(: HTTP \d+| · 1 check: HTTP \d+)?<\/dd>/,
    );
    expect(refused).not.toMatch(/\d effects?\b(?! \()/);
  });
});

describe("the health page compares only with a day that has data", () => {
  it("says 'no baseline yet' when yesterday is empty, and calls nothing worse", async () => {
    const run = await openRun("acme");
    // A loop today: against a yesterday with data it would be worse; against none it is not judged.
    for (let attempt = 0; attempt < 3; attempt++) await callTool(run, "lookup_order", { order_id: "A1005" });
    const operator = await signedInOperator("acme");
    const html = await vi.waitFor(
      async () => {
        const page = await operator.get("/console/health");
        expect(page.status).toBe(200);
        expect(page.html).toContain("1 loop refused by the repeat breaker");
        return page.html;
      },
      { timeout: 15_000, interval: 250 },
    );
    expect(html).not.toContain("Worse than yesterday");
    expect(html).not.toContain('class="worse"');
    expect(html).toMatch(/No baseline yet in [^.]*<code>support<\/code>/);
    expect(html).toContain("no baseline yet, yesterday has no data");
    expect(html).toMatch(/<th scope="row">Loops<\/th><td>no data<\/td><td>1<\/td>/);
  });
});

describe("the console writes counts with the right plural", () => {
  it("writes 1 answer, 2 answers, and a given plural", () => {
    expect(plural(1, "answer")).toBe("1 answer");
    expect(plural(0, "answer")).toBe("0 answers");
    expect(plural(2, "reply", "replies")).toBe("2 replies");
  });

  it("writes no '1 …s' on the pages that count", async () => {
    const store = env.METRICS_STORE;
    if (!store) throw new Error("the sandbox binds METRICS_STORE");
    // initech's only day: one of everything the health page counts, written at the source.
    const [namespace = "support"] = namespacesOf("initech");
    const one = { calls: 1, succeeded: 1, loops: 1, escalations: 1, replays: 1, duplicates_prevented: 1 };
    await store.get(store.idFromName("initech")).record([
      {
        minute: Math.floor(Date.now() / 60_000),
        namespace,
        tool: "lookup_order",
        counts: { ...zeroCounts(), ...one },
      },
    ]);
    const run = await openRun("initech", { namespace });
    await deliverUncalledRun(run);
    const operator = await signedInOperator("initech");
    const health = (await operator.get("/console/health")).html;
    expect(health).toContain("1 answer served from the ledger, 1 effect not done twice");
    expect(health).toContain(
      "1 escalation (a call waiting for a human), 1 loop refused by the repeat breaker",
    );
    expect(health).toContain("1 call in the last 24 h");
    // initech's one run, listed once the tenant's directory has it.
    const runs = await vi.waitFor(
      async () => {
        const { html } = await operator.get("/console/runs");
        expect(html).toContain("1 run, newest first");
        return html;
      },
      { timeout: 10_000, interval: 250 },
    );
    for (const html of [health, runs, (await operator.get(`/console/runs/${run.id}`)).html]) {
      const text = html.replace(/<[^>]+>/g, "");
      expect(text).not.toMatch(
        /\b1 (answers|effects|calls|runs|loops|escalations|approvals|checks|attempts|writes)\b/,
      );
    }
  });
});

describe("the OAuth consent page states how long the grant lasts", () => {
  async function consentPage(operator: ConsoleClient) {
    const registered = await json("/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Lifetime test client",
        application_type: "native",
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      }),
    });
    expect(registered.status).toBe(201);
    const { challenge } = await pkcePair();
    return operator.get(
      `/authorize?${new URLSearchParams({
        response_type: "code",
        redirect_uri: REDIRECT_URI,
        state: "st-1",
        client_id: String(registered.body.client_id),
        code_challenge: challenge,
        code_challenge_method: "S256",
      })}`,
    );
  }

  it("names the access token's hour and the grant's 30 days before the operator allows it", async () => {
    const page = await consentPage(await signedInOperator("acme"));
    expect(page.status).toBe(200);
    const lasts = page.html.slice(page.html.indexOf("<dt>Lasts</dt>"));
    expect(lasts).toMatch(
      /^<dt>Lasts<\/dt><dd class="grant-lifetime">30 days: each access token is good for 1 hour, and the\s+application renews it with its refresh token until the grant ends, 30 days\s+after you allow it\. Then an operator must allow it again\.<\/dd>/,
    );
  });
});
