import { describe, expect, it } from "vitest";
import { callTool, openRun, request, sandboxRequests, type TestRun } from "./helpers";

/**
 * stark's tool limits in wrangler.toml: create_internal_ticket 2 per 60 s per customer_id,
 * lookup_order 4 per 60 s, all of stark's runs together. stark has no sandbox data: every call the
 * limits let through is dispatched and ends not_found. Each test uses its own customers, and the
 * order lookups are counted in one test only.
 */

function ticket(run: TestRun, customer_id: string, summary: string, headers: Record<string, string> = {}) {
  return callTool(run, "create_internal_ticket", { customer_id, priority: "normal", summary }, headers);
}

async function callsUsed(run: TestRun): Promise<number> {
  const { body } = await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } });
  return (body.data as { used: { calls_used: number } }).used.calls_used;
}

/**
 * A call the limits let through reaches the sandbox; stark has no customers there, so a ticket
 * ends not_found, which is the upstream's answer, not the limiter's.
 */
async function dispatched(call: ReturnType<typeof callTool>): Promise<void> {
  const { body } = await call;
  expect(body.error?.code, JSON.stringify(body.error)).toBe("not_found");
}

async function ticketPosts(run: TestRun): Promise<number> {
  return (await sandboxRequests(run.id)).filter(
    (entry) => entry.method === "POST" && entry.path === "/tickets",
  ).length;
}

describe("a tool's limit per subject, across a tenant's runs", () => {
  it("counts one customer's tickets across runs, refuses the third with the exact wait, and leaves other customers alone", async () => {
    const first = await openRun("stark");
    const second = await openRun("stark");
    await dispatched(ticket(first, "C601", "Customer asks about a late parcel"));
    await dispatched(ticket(second, "C601", "Customer asks for an invoice copy"));

    const usedBefore = await callsUsed(first);
    const refused = await ticket(first, "C601", "Customer asks for a phone call back");
    expect(refused.status).toBe(429);
    expect(refused.body.outcome).toBe("retryable_failure");
    const error = refused.body.error;
    expect(error?.code).toBe("rate_limited");
    expect(error?.side_effect_confirmed).toBe(false);
    expect(error?.details).toEqual({
      scope: "tool_calls",
      tool: "create_internal_ticket",
      limit: 2,
      window_s: 60,
      per: "customer_id",
      subject: "C601",
    });
    // Two tokens taken moments ago from a bucket of 2 per 60 s: the next comes back 30 s after the first.
    expect(error?.retry_after_ms).toBeGreaterThan(25_000);
    expect(error?.retry_after_ms).toBeLessThanOrEqual(30_000);
    expect(refused.headers.get("retry-after")).toBe(String(Math.ceil((error?.retry_after_ms ?? 0) / 1000)));
    expect(error?.message).toContain("for each customer_id (this one: C601)");
    // Not dispatched, not charged.
    expect(await ticketPosts(first)).toBe(1);
    expect(await callsUsed(first)).toBe(usedBefore);

    // Another customer has a bucket of its own; another tool is not limited at all.
    await dispatched(ticket(first, "C602", "Customer asks about a late parcel"));
    const policy = await callTool(first, "search_refund_policy", { query: "late delivery" });
    expect(policy.body.error?.code).not.toBe("rate_limited");
  });

  it("never refuses the resend of a call in doubt: it goes out under its key, while a new call on the spent customer is refused", async () => {
    const run = await openRun("stark");
    const other = await openRun("stark");
    const summary = "Customer reports a damaged item";
    // The upstream answers 500: the ledger cannot know whether the ticket was made, so the key is in doubt.
    const doubt = await ticket(run, "C603", summary, { "x-sandbox-fault": "error_500" });
    expect(doubt.body.outcome).toBe("retryable_failure");
    expect(doubt.body.error?.side_effect_confirmed).toBeNull();
    // Another run spends the customer's second token.
    await dispatched(ticket(other, "C603", "Customer asks for an invoice copy"));
    expect((await ticket(run, "C603", "Customer asks for a phone call back")).body.error?.code).toBe(
      "rate_limited",
    );

    // The resend goes out under the same key; whatever the upstream answers, the earlier attempt
    // may have acted, so the answer never says "not done".
    const resend = await ticket(run, "C603", summary);
    expect(resend.body.error?.code).not.toBe("rate_limited");
    expect(resend.body.idempotency_key).toBe(doubt.body.idempotency_key);
    expect(resend.body.error?.side_effect_confirmed).not.toBe(false);
    expect(await ticketPosts(run)).toBe(2);
    // And again: a key in doubt or completed takes no token, whatever its bucket holds.
    const again = await ticket(run, "C603", summary);
    expect(again.body.error?.code).not.toBe("rate_limited");
  });
});

describe("a tool's limit for all subjects together", () => {
  it("refuses the fifth order lookup across runs, and the run's other tools still answer", async () => {
    const runs = [await openRun("stark"), await openRun("stark")];
    for (let index = 0; index < 4; index++) {
      const run = runs[index % 2] as TestRun;
      const looked = await callTool(run, "lookup_order", { order_id: `S000${index}` });
      expect(looked.body.error?.code).not.toBe("rate_limited");
    }
    const refused = await callTool(runs[0] as TestRun, "lookup_order", { order_id: "S0009" });
    expect(refused.status).toBe(429);
    expect(refused.body.error?.details).toEqual({
      scope: "tool_calls",
      tool: "lookup_order",
      limit: 4,
      window_s: 60,
    });
    expect(refused.body.error?.retry_after_ms).toBeGreaterThan(10_000);
    expect(refused.body.error?.retry_after_ms).toBeLessThanOrEqual(15_000);
    // The edge does not remember a tool's refusal for the whole run.
    const other = await callTool(runs[0] as TestRun, "search_refund_policy", { query: "late delivery" });
    expect(other.body.error?.code).not.toBe("rate_limited");
  });
});

describe("the run's rate limit and a resend in doubt", () => {
  it("refuses the resend without saying it was not done, at the run's ledger and never from the edge's memory", async () => {
    // umbrella: 3 calls per run and 5 per tenant a minute (this file's umbrella is its own).
    const run = await openRun("umbrella");
    const summary = "Customer reports a damaged item";
    const doubt = await ticket(run, "C401", summary, { "x-sandbox-fault": "error_500" });
    expect(doubt.body.error?.side_effect_confirmed).toBeNull();
    for (const order_id of ["U0001", "U0002"]) await callTool(run, "lookup_order", { order_id });

    const resend = await ticket(run, "C401", summary);
    expect(resend.status).toBe(429);
    expect(resend.body.error?.details).toMatchObject({ scope: "run_calls" });
    expect(resend.body.error?.side_effect_confirmed).toBeNull();
    expect(resend.body.idempotency_key).toBe(doubt.body.idempotency_key);
    // A read is now answered at the edge; the resend still reaches the ledger, which still knows.
    expect(
      (await callTool(run, "lookup_order", { order_id: "U0003" })).body.error?.side_effect_confirmed,
    ).toBe(false);
    const again = await ticket(run, "C401", summary);
    expect(again.body.error?.code).toBe("rate_limited");
    expect(again.body.error?.side_effect_confirmed).toBeNull();
    // A new ticket was never sent: its refusal says so.
    const fresh = await ticket(run, "C402", summary);
    expect(fresh.body.error?.code).toBe("rate_limited");
    expect(fresh.body.error?.side_effect_confirmed).toBe(false);
    expect(await ticketPosts(run)).toBe(1);
  });
});
