import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  armFault,
  callTool,
  ledgerStubOf,
  openRun,
  refundSentThenLost,
  refundsOfRun,
  restartDurableObject,
  sandbox,
  sandboxRequests,
  type TestRun,
  traceOf,
} from "./helpers";

/**
 * Certainty only moves up, and what can be settled is settled: once an attempt under a key may
 * have acted, no later answer says "not done" unless a read proves it; a success whose body was lost
 * is read back and verified; a send cut off by a restart is reconciled by the ledger's alarm, so
 * the trace never shows it pending. Checked at the sandbox, the source of truth.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits (in short steps) until the sandbox's log shows a request of the run that `matches`. Up to
 * 4 s, so a loaded machine is given time: the faults these tests arm hold their answer longer than
 * that after the request is logged, so the wait ends well before the answer could arrive.
 */
async function untilSandboxSaw(
  run: TestRun,
  matches: (entry: Awaited<ReturnType<typeof sandboxRequests>>[number]) => boolean,
) {
  for (let wait = 0; wait < 160; wait++) {
    if ((await sandboxRequests(run.id)).some(matches)) return;
    await sleep(25);
  }
  throw new Error("the sandbox never saw the request");
}

describe("certainty only moves up (F1)", () => {
  it("a refund sent, then cut off by a ledger restart, met by a 429 on its resend: unknown, never false, and the next resend answers the refund", async () => {
    // globex auto-approves refunds up to 1000 cents, so the story runs without a human in it.
    const run = await openRun("globex");
    const args = { order_id: "B2002", amount_cents: 120, reason: "user_cancel" };
    // The state a crash mid-send leaves: the key recorded as sending, the request at the upstream,
    // which acted, and no answer ever recorded by the ledger.
    const { key, refundId } = await refundSentThenLost(run, args);

    await armFault(run.id, { mode: "rate_limited", path_prefix: "/refunds", retry_after_s: 0 });
    const limited = await callTool(run, "issue_refund", args);
    expect(limited.body.error?.code).toBe("rate_limited");
    expect(limited.body.outcome).toBe("retryable_failure");
    // Before: false, although the refund exists at the source.
    expect(limited.body.error?.side_effect_confirmed).toBeNull();
    expect(limited.body.error?.recommended_next_action).toBe("retry");
    expect(await refundsOfRun("B2002", run)).toHaveLength(1);

    // A resend refused before anything leaves (a fault header the tool cannot suffer) sends nothing,
    // and still does not say "not done" of the refund its key made.
    const refusedResend = await callTool(run, "issue_refund", args, { "x-sandbox-fault": "stale" });
    expect(refusedResend.body.error?.code).toBe("validation_error");
    expect(refusedResend.body.error?.side_effect_confirmed).toBeNull();
    expect(refusedResend.body.idempotency_key).toBe(key);

    const settled = await callTool(run, "issue_refund", args);
    expect(settled.body.outcome).toBe("success");
    expect((settled.body.data as { refund_id: string }).refund_id).toBe(refundId);
    expect(await refundsOfRun("B2002", run)).toHaveLength(1);

    // Once the refund is settled, the same refusal carries it as done.
    const afterSettled = await callTool(run, "issue_refund", args, { "x-sandbox-fault": "stale" });
    expect(afterSettled.body.error?.side_effect_confirmed).toBe(true);
    expect(afterSettled.body.error?.external_id).toBe(refundId);
  });
});

describe("certainty only moves up past an earlier answer (F1)", () => {
  it("a 429, then a resend that acted and was cut off by a restart, then a 429 again: unknown, never false", async () => {
    // hooli auto-approves refunds up to 1000 cents, and its loose repeat breaker lets a key be resent.
    const run = await openRun("hooli");
    const args = { order_id: "H0161", amount_cents: 140, reason: "user_cancel" };
    await armFault(run.id, { mode: "rate_limited", path_prefix: "/refunds", retry_after_s: 0 });
    const first = await callTool(run, "issue_refund", args);
    // Known not done: the upstream's rate limiter answered before the application.
    expect(first.body.error?.side_effect_confirmed).toBe(false);

    // The resend leaves and acts, and the ledger restarts before its answer is recorded: the key
    // still holds the first answer, which no longer speaks for every send made under it.
    const { refundId } = await refundSentThenLost(run, args);
    await restartDurableObject(ledgerStubOf(run));

    await armFault(run.id, { mode: "rate_limited", path_prefix: "/refunds", retry_after_s: 0 });
    const limited = await callTool(run, "issue_refund", args);
    expect(limited.body.error?.code).toBe("rate_limited");
    // Before: false, from the first 429, although the refund exists at the source.
    expect(limited.body.error?.side_effect_confirmed).toBeNull();
    expect(limited.body.error?.details).toMatchObject({ earlier_attempt_may_have_acted: true });

    const settled = await callTool(run, "issue_refund", args);
    expect(settled.body.outcome, JSON.stringify(settled.body.error)).toBe("success");
    expect((settled.body.data as { refund_id: string }).refund_id).toBe(refundId);
    expect(await refundsOfRun("H0161", run)).toHaveLength(1);
  });
});

describe("a success whose answer was lost is read back and settled (F9)", () => {
  it("a ticket created under a truncated 201 is read back by its key, verified, and answered as the ticket the CRM holds", async () => {
    const run = await openRun("acme");
    const args = {
      customer_id: "C103",
      priority: "normal",
      summary: "Customer reports the parcel tracking page is blank.",
    };
    await armFault(run.id, { mode: "truncated", path_prefix: "/tickets", times: 1 });
    const first = await callTool(run, "create_internal_ticket", args);

    const tickets = (
      await sandbox<{ tickets: Array<{ ticket_id: string; run_id: string }> }>("/_admin/tickets?tenant=acme")
    ).tickets.filter((ticket) => ticket.run_id === run.id);
    expect(tickets).toHaveLength(1);
    // Before: terminal_error with side_effect_confirmed null, replayed so forever.
    expect(first.body.outcome).toBe("success");
    expect((first.body.data as { ticket_id: string }).ticket_id).toBe(tickets[0]?.ticket_id);
    expect(first.body.observed_state).toMatchObject({
      postcondition: { tool: "lookup_ticket", verified: true },
    });

    const again = await callTool(run, "create_internal_ticket", args);
    expect(again.body.replayed).toBe(true);
    expect(again.body.data).toEqual(first.body.data);

    const requests = (await sandboxRequests(run.id)).map((entry) => [entry.method, entry.path, entry.fault]);
    expect(requests).toEqual([
      ["POST", "/tickets", "truncated"],
      ["GET", `/tickets/idempotency-keys/${first.body.idempotency_key}`, null],
      ["GET", `/tickets/${tickets[0]?.ticket_id}`, null],
    ]);
  });
});

describe("a send cut off by a restart is reconciled by the alarm (D8)", () => {
  it("the refund that acted while the ledger restarted: the alarm was set when it left, closes its trace entry and leaves its key in doubt, and the resend answers the one refund", async () => {
    const run = await openRun("globex");
    const args = { order_id: "B2003", amount_cents: 130, reason: "price_error" };
    // The upstream acts, then holds its answer: the ledger restarts while it waits.
    await armFault(run.id, { mode: "slow_success", path_prefix: "/refunds", hang_ms: 5_000 });
    const pending = callTool(run, "issue_refund", args);
    await untilSandboxSaw(run, (entry) => entry.fault === "slow_success" && entry.phase === "completed");

    // Set when the send left, not at the run's retention a day away: a restart is followed by it.
    const alarmAt = await runInDurableObject(ledgerStubOf(run), (_instance, state) =>
      state.storage.getAlarm(),
    );
    expect(alarmAt).not.toBeNull();
    expect(alarmAt as number).toBeLessThan(Date.now() + 60_000);

    await restartDurableObject(ledgerStubOf(run));
    const interrupted = await pending;
    expect(interrupted.body.outcome).not.toBe("success");
    expect(await refundsOfRun("B2003", run)).toHaveLength(1);
    expect((await traceOf(run)).map((entry) => [entry.actor, entry.outcome])).toEqual([["agent", "pending"]]);

    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    // Before: ["agent", "pending"] forever.
    const trace = await traceOf(run);
    expect(trace.map((entry) => [entry.actor, entry.outcome, entry.error_code])).toEqual([
      ["agent", "retryable_failure", "internal_error"],
    ]);

    // The key is in doubt, not completed as interrupted: the identical call resends its bytes and
    // the upstream's replay settles it.
    const settled = await callTool(run, "issue_refund", args);
    expect(settled.body.outcome).toBe("success");
    const [refund] = await refundsOfRun("B2003", run);
    expect((settled.body.data as { refund_id: string }).refund_id).toBe(refund?.refund_id);
    expect(await refundsOfRun("B2003", run)).toHaveLength(1);
    expect((await traceOf(run)).map((entry) => [entry.outcome, entry.error_code])).toEqual([
      ["retryable_failure", "internal_error"],
      ["success", null],
    ]);
  });
});
