import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  armFault,
  callTool,
  ledgerStubOf,
  openRun,
  refundSentThenLost,
  refundsOfRun,
  runOutIdempotencyLease,
  sandbox,
  sandboxRequests,
  traceOf,
} from "./helpers";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("idempotency with server-derived keys", () => {
  it("coalesces 50 concurrent identical refunds onto one upstream effect and one envelope", async () => {
    const run = await openRun("initech", { namespace: "support", limits: { max_calls: 60 } });
    const args = { order_id: "I3001", amount_cents: 100, reason: "price_error" };
    const answers = await Promise.all(Array.from({ length: 50 }, () => callTool(run, "issue_refund", args)));

    expect(await refundsOfRun("I3001", run)).toHaveLength(1);
    expect((await sandboxRequests(run.id)).filter((request) => request.path === "/refunds")).toHaveLength(1);
    const [first] = answers;
    for (const { body } of answers) {
      expect(body.outcome).toBe("success");
      expect(body.data).toEqual(first?.body.data);
      expect(body.idempotency_key).toBe(first?.body.idempotency_key);
      expect(body.error).toBeNull();
    }
    expect(answers.filter(({ body }) => !body.replayed)).toHaveLength(1);
    expect(new Set(answers.map(({ body }) => body.call_id)).size).toBe(50);
  });

  it("turns the opening story into one refund: 502 once, then three agent retries", async () => {
    // globex auto-approves refunds up to 1000 cents, so the story runs without a human in it.
    const run = await openRun("globex");
    await armFault(run.id, { mode: "bad_gateway", path_prefix: "/refunds", times: 1 });
    const args = { order_id: "B2002", amount_cents: 500, reason: "user_cancel" };
    const first = await callTool(run, "issue_refund", args);
    expect(first.body.outcome).toBe("retryable_failure");
    expect(first.body.error?.side_effect_confirmed).toBeNull();

    const retries = [];
    for (let attempt = 0; attempt < 3; attempt++) retries.push(await callTool(run, "issue_refund", args));
    expect(retries[0]?.body.outcome).toBe("success");
    expect(retries.slice(1).map(({ body }) => body.error?.code)).toEqual([
      "repeat_detected",
      "repeat_detected",
    ]);

    expect(await refundsOfRun("B2002", run)).toHaveLength(1);
    const sent = (await sandboxRequests(run.id)).filter((request) => request.path === "/refunds");
    expect(sent.map((request) => request.status)).toEqual([502, 201]);
    expect(new Set(sent.map((request) => request.idempotency_key))).toEqual(
      new Set([first.body.idempotency_key]),
    );
    const trace = await traceOf(run);
    expect(trace.map((entry) => entry.error_code)).toEqual([
      "transient_error",
      null,
      "repeat_detected",
      "repeat_detected",
    ]);
  });

  it("replays a completed write from the ledger without touching the upstream", async () => {
    const run = await openRun("acme");
    const args = {
      customer_id: "C102",
      priority: "high",
      summary: "Package arrived damaged, customer wants a replacement.",
    };
    const first = await callTool(run, "create_internal_ticket", args);
    const again = await callTool(run, "create_internal_ticket", args);
    expect(again.body.replayed).toBe(true);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.body.data).toEqual(first.body.data);
    expect(again.body.budget?.writes_left).toBe(first.body.budget?.writes_left);
    // The write once, and its postcondition read once: the replay sends neither.
    expect((await sandboxRequests(run.id)).map(({ method }) => method)).toEqual(["POST", "GET"]);
  });

  it("after the ledger restarts between reserve and commit, the next identical call does not repeat the effect", async () => {
    const run = await openRun("acme");
    const args = { order_id: "A1004", amount_cents: 250, reason: "out_of_stock" };
    // The state a crash leaves: the key was reserved and the request reached the upstream, which acted,
    // but the ledger never recorded the answer.
    const { key, refundId } = await refundSentThenLost(run, args);

    const { body } = await callTool(run, "issue_refund", args);
    expect(body.outcome).toBe("success");
    expect(body.idempotency_key).toBe(key);
    expect((body.data as { refund_id: string }).refund_id).toBe(refundId);
    expect(await refundsOfRun("A1004", run)).toHaveLength(1);
  });

  it("survives a real restart of the ledger in mid-call without a second effect", async () => {
    const run = await openRun("initech");
    await armFault(run.id, { mode: "hang", path_prefix: "/refunds", hang_ms: 1_500 });
    const args = { order_id: "I3002", amount_cents: 300, reason: "user_cancel" };
    const pending = callTool(run, "issue_refund", args);
    for (let wait = 0; wait < 50 && (await sandboxRequests(run.id)).length === 0; wait++) await sleep(50);
    await abortAllDurableObjects();
    const interrupted = await pending;
    expect(interrupted.body.outcome).toBe("retryable_failure");

    // The upstream holds the interrupted request's key until its lease lapses; the lease is run
    // out (its stored clock passes it) before each resend instead of waited for.
    const [lost] = await sandboxRequests(run.id);
    let answer = interrupted;
    for (let attempt = 0; attempt < 10 && answer.body.outcome !== "success"; attempt++) {
      if (attempt > 0) await sleep(100);
      await runOutIdempotencyLease(run.tenant, lost?.idempotency_key ?? "");
      answer = await callTool(run, "issue_refund", args);
    }
    expect(answer.body.outcome).toBe("success");
    expect(await refundsOfRun("I3002", run)).toHaveLength(1);
    const sent = (await sandboxRequests(run.id)).filter((request) => request.path === "/refunds");
    expect(new Set(sent.map((request) => request.idempotency_key)).size).toBe(1);
  }, 30_000);

  it("makes two identical writes distinct only through the orchestrator's intent header", async () => {
    const run = await openRun("acme");
    const args = {
      customer_id: "C104",
      priority: "low",
      summary: "Monthly check-in call requested by the customer.",
    };
    const first = await callTool(run, "create_internal_ticket", args, { "x-call-intent": "check-in-march" });
    const second = await callTool(run, "create_internal_ticket", args, { "x-call-intent": "check-in-april" });
    expect(second.body.replayed).toBe(false);
    expect(second.body.idempotency_key).not.toBe(first.body.idempotency_key);
    const tickets = (await sandbox<{ tickets: Array<{ run_id: string }> }>("/_admin/tickets?tenant=acme"))
      .tickets;
    expect(tickets.filter((ticket) => ticket.run_id === run.id)).toHaveLength(2);
  });

  it("derives a different key in another run for the same arguments", async () => {
    const args = {
      customer_id: "C105",
      priority: "normal",
      summary: "Customer asks for an invoice copy by post.",
    };
    const a = await callTool(await openRun("acme"), "create_internal_ticket", args);
    const b = await callTool(await openRun("acme"), "create_internal_ticket", args);
    expect(a.body.idempotency_key).not.toBe(b.body.idempotency_key);
    expect(b.body.replayed).toBe(false);
  });

  it("stores nothing for a call that failed validation", async () => {
    const run = await openRun("acme");
    await callTool(run, "issue_refund", { order_id: "A1001", amount_cents: -5, reason: "user_cancel" });
    const keys = await runInDurableObject(ledgerStubOf(run), (_instance, state) =>
      state.storage.sql.exec("SELECT COUNT(*) AS n FROM idempotency").one(),
    );
    expect(keys.n).toBe(0);
  });
});
