import { describe, expect, it } from "vitest";
import type { CapLimit } from "../../src/wire/effects";
import { callTool, KEYS, refund, refundsOf, request, type TestRun } from "./helpers";
import { userAssertion } from "./user-assertions";

/**
 * wayne's per-user daily caps (wrangler.toml: five destructive calls and 1000.00 a day per user),
 * held by the tenant's effect shards as its other daily caps are: reserved before a request leaves.
 * Each test names users of its own, so no other test's calls count against them.
 */

/** A wayne run acting for `sub`, whose refund limit lets any refund the tenant allows go through. */
async function runFor(sub: string): Promise<TestRun> {
  const opened = await request("/v1/runs", {
    method: "POST",
    headers: {
      authorization: `Bearer ${KEYS.wayne}`,
      "content-type": "application/json",
      "x-user-assertion": await userAssertion(sub, { refund_limit_cents: 50_000 }),
    },
    body: JSON.stringify({ namespace: "support", limits: { max_writes: 10, max_destructive: 10 } }),
  });
  expect(opened.status, JSON.stringify(opened.body.error)).toBe(201);
  const data = opened.body.data as { run_id: string; run_token: string };
  return { id: data.run_id, token: data.run_token, tenant: "wayne", data };
}

const userOf = (name: string) => `${name}-${crypto.randomUUID().slice(0, 8)}`;
const limitOf = (body: { error: { details?: unknown } | null }) =>
  (body.error?.details as { limit?: CapLimit } | undefined)?.limit;

describe("a user's daily caps", () => {
  it("holds five destructive calls a day for one user across 12 concurrent runs; another user is unaffected", async () => {
    const carol = userOf("carol");
    const runs = await Promise.all(Array.from({ length: 12 }, () => runFor(carol)));
    const orders = runs.map((_, index) => `W${String(11 + index).padStart(4, "0")}`);
    const before = await Promise.all(orders.map((order) => refundsOf(order)));
    const answers = await Promise.all(
      runs.map((run, index) => callTool(run, "issue_refund", refund(orders[index] ?? "", 100))),
    );
    const done = answers.filter((answer) => answer.body.outcome === "success");
    const held = answers.filter((answer) => answer.body.error?.code === "approval_required");
    expect(done).toHaveLength(5);
    expect(held).toHaveLength(7);
    for (const answer of held) {
      expect(limitOf(answer.body)).toMatchObject({
        cap: "per_user_destructive_day",
        currency: "calls",
        subject: carol,
        limit: 5,
        amount: 1,
      });
      expect(answer.body.error?.message).toMatch(/daily per-user cap of destructive calls for carol-/);
    }
    // Exactly five refunds reached the upstream, one per call that went through.
    const after = await Promise.all(orders.map((order) => refundsOf(order)));
    const sent = after.reduce(
      (sum, refunds, index) => sum + refunds.length - (before[index]?.length ?? 0),
      0,
    );
    expect(sent).toBe(5);
    const dave = await runFor(userOf("dave"));
    const other = await callTool(dave, "issue_refund", refund("W0023", 100));
    expect(other.body.outcome, JSON.stringify(other.body.error)).toBe("success");
  });

  it("holds the value one user moves in a day across runs, and not another user's", async () => {
    const erin = userOf("erin");
    const first = await callTool(await runFor(erin), "issue_refund", refund("W0024", 45_000));
    const second = await callTool(await runFor(erin), "issue_refund", refund("W0025", 45_000));
    expect(first.body.outcome, JSON.stringify(first.body.error)).toBe("success");
    expect(second.body.outcome, JSON.stringify(second.body.error)).toBe("success");
    const third = await callTool(await runFor(erin), "issue_refund", refund("W0026", 20_000));
    expect(third.body.error?.code).toBe("approval_required");
    expect(limitOf(third.body)).toEqual({
      cap: "per_user_day",
      currency: "USD",
      subject: erin,
      limit: 100_000,
      used: 90_000,
      reserved: 0,
      remaining: 10_000,
      amount: 20_000,
    });
    const frank = await callTool(await runFor(userOf("frank")), "issue_refund", refund("W0027", 20_000));
    expect(frank.body.outcome, JSON.stringify(frank.body.error)).toBe("success");
  });
});
