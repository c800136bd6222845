import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { ShardVerdict } from "../../src/effects/shard-rules";
import type { EffectShard } from "../../src/ledger/effect-shard";
import { ACKNOWLEDGED_DELETE_AFTER_MS } from "../../src/ledger/outbox";
import {
  asOperator,
  callTool,
  decide,
  ledgerStubOf,
  openRun,
  outboxTopicsOf,
  refundsOf,
  restartDurableObject,
  runLedgerTimers,
  sandbox,
  type TestRun,
  withHeldTimers,
} from "./helpers";

/**
 * The guarantees past one run, through the public interface: a second run's effect on the same
 * business thing waits for a human who sees the first, value caps are reserved before a request
 * leaves, and a refuted effect gives its reservation back. Tenant hooli (wrangler.toml): refunds
 * up to 1000 cents are auto-approved; `issue_refund` names its effect by `order_id` and moves
 * `amount_cents` USD, capped at 4000 a run, 2500 an order a day and 50000 a day.
 */

const refund = (order_id: string, amount_cents: number, reason = "user_cancel") => ({
  order_id,
  amount_cents,
  reason,
});

interface ApprovalDetails {
  approval_id: string;
  earlier_effects?: Array<Record<string, unknown>>;
  limit?: Record<string, unknown>;
}

const detailsOf = (body: { error: { details?: unknown } | null }) => body.error?.details as ApprovalDetails;

/** A hooli run that may make several refunds (the default allows one destructive action). */
const openManyRefundsRun = () => openRun("hooli", { namespace: "support", limits: { max_destructive: 10 } });

async function refundIn(run: TestRun, order: string, amount: number, reason?: string) {
  return callTool(run, "issue_refund", refund(order, amount, reason));
}

/**
 * One auto-approved refund in a hooli run, then the same refund in a second run, which waits for a
 * human: the first run, its refund's id and the second run's answer.
 */
async function sameRefundInTwoRuns(order: string, amount: number) {
  const first = await openRun("hooli");
  const second = await openRun("hooli");
  const done = await refundIn(first, order, amount);
  expect(done.body.outcome, JSON.stringify(done.body.error)).toBe("success");
  const again = await refundIn(second, order, amount);
  expect(again.body.error?.code).toBe("approval_required");
  return { first, refundId: (done.body.data as { refund_id: string }).refund_id, again };
}

describe("the same effect from another run", () => {
  it("sends a second run's auto-approved refund of the same order to a human, naming the first", async () => {
    const { first, refundId, again } = await sameRefundInTwoRuns("H0001", 700);
    expect(detailsOf(again.body).earlier_effects).toEqual([
      expect.objectContaining({
        run_id: first.id,
        tool: "support.issue_refund",
        identity: { order_id: "H0001" },
        outcome: "confirmed",
        external_id: refundId,
        args: refund("H0001", 700),
      }),
    ]);
    expect(again.body.error?.message).toMatch(/another run already acted on the same order_id H0001/);
    expect(await refundsOf("H0001")).toHaveLength(1);
  });

  it("answers a write once the tenant's shards hold its fate, so the next run meets it confirmed however slow the shard", async () => {
    // Every shard of this isolate applies a fate 150 ms late: an answer given before the delivery
    // would leave the next run's claim to find the first effect still "sent".
    const probe = env.EFFECT_SHARD.get(env.EFFECT_SHARD.idFromName(`slow-apply-${crypto.randomUUID()}`));
    type Apply = EffectShard["apply"];
    const prototype: { apply: Apply } = await runInDurableObject(probe, (instance) =>
      Object.getPrototypeOf(instance),
    );
    const apply = prototype.apply;
    prototype.apply = async function (this: EffectShard, update: Parameters<Apply>[0]) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      return apply.call(this, update);
    };
    try {
      const { first, refundId, again } = await sameRefundInTwoRuns("H0199", 600);
      expect(detailsOf(again.body).earlier_effects).toEqual([
        expect.objectContaining({ run_id: first.id, outcome: "confirmed", external_id: refundId }),
      ]);
    } finally {
      prototype.apply = apply;
    }
  });

  it("deletes a delivered fate with the run's next commit or on its own, and a restart before that only delivers it again", async () => {
    // The timers are held: the delivered row's own deletion runs when the test says, not when a slow
    // machine lets it.
    const { first, done } = await withHeldTimers(async () => {
      // Left alone, the delivered row goes ACKNOWLEDGED_DELETE_AFTER_MS after its delivery.
      const quiet = await openRun("hooli");
      const kept = await refundIn(quiet, "H0197", 300);
      expect(kept.body.outcome, JSON.stringify(kept.body.error)).toBe("success");
      const effect = `effect:${kept.body.idempotency_key}`;
      expect(await outboxTopicsOf(quiet)).toContain(effect);
      await runLedgerTimers(quiet, ACKNOWLEDGED_DELETE_AFTER_MS - 1);
      expect(await outboxTopicsOf(quiet)).toContain(effect);
      await runLedgerTimers(quiet, 1);
      expect(await outboxTopicsOf(quiet)).toEqual([]);

      // A restart before the deletion: the woken ledger delivers the fate again, which changes nothing.
      const first = await openRun("hooli");
      const done = await refundIn(first, "H0198", 400);
      expect(done.body.outcome, JSON.stringify(done.body.error)).toBe("success");
      expect(await outboxTopicsOf(first)).toContain(`effect:${done.body.idempotency_key}`);
      await restartDurableObject(ledgerStubOf(first));
      return { first, done };
    });
    // The restarted ledger's held timer went with its instance; the woken one runs on real timers.
    await vi.waitFor(async () => expect(await outboxTopicsOf(first)).toEqual([]), {
      timeout: 5_000,
      interval: 20,
    });
    const second = await openRun("hooli");
    const again = await refundIn(second, "H0198", 400);
    expect(again.body.error?.code).toBe("approval_required");
    expect(detailsOf(again.body).earlier_effects).toEqual([
      expect.objectContaining({
        run_id: first.id,
        outcome: "confirmed",
        external_id: (done.body.data as { refund_id: string }).refund_id,
      }),
    ]);
    expect(await refundsOf("H0198")).toHaveLength(1);
  });

  it("counts another reason or one cent less as the same effect", async () => {
    const first = await openRun("hooli");
    expect((await refundIn(first, "H0002", 700)).body.outcome).toBe("success");
    for (const [amount, reason] of [
      [700, "price_error"],
      [699, "user_cancel"],
    ] as const) {
      const other = await openRun("hooli");
      const { body } = await refundIn(other, "H0002", amount, reason);
      expect(body.error?.code).toBe("approval_required");
      expect(detailsOf(body).earlier_effects?.[0]).toMatchObject({ run_id: first.id });
    }
    expect(await refundsOf("H0002")).toHaveLength(1);
  });

  it("lets the operator approve the repeat only once they confirm it, then executes it once", async () => {
    const first = await openRun("hooli");
    expect((await refundIn(first, "H0003", 500)).body.outcome).toBe("success");
    const second = await openRun("hooli");
    const held = await refundIn(second, "H0003", 500);
    const { approval_id } = detailsOf(held.body);
    const approval = await asOperator(`/v1/approvals/${approval_id}`, {}, "hooli");
    expect(approval.body.data).toMatchObject({
      approval: { earlier_effects: [expect.objectContaining({ run_id: first.id })] },
    });

    const unconfirmed = await decide(approval_id, "approve", "same customer asked twice", "hooli");
    expect(unconfirmed.status).toBe(409);
    expect(unconfirmed.body.error?.details).toMatchObject({ reason: "duplicate_unconfirmed" });
    expect(unconfirmed.body.error?.message).toContain(first.id);
    expect(await refundsOf("H0003")).toHaveLength(1);

    const confirmed = await asOperator(
      `/v1/approvals/${approval_id}/approve`,
      { method: "POST", body: JSON.stringify({ reason: "two items", confirm_duplicate: true }) },
      "hooli",
    );
    expect(confirmed.status, JSON.stringify(confirmed.body.error)).toBe(200);
    expect(await refundsOf("H0003")).toHaveLength(2);
    const replay = await refundIn(second, "H0003", 500);
    expect(replay.body.outcome).toBe("success");
    expect(await refundsOf("H0003")).toHaveLength(2);
  });

  it("lets exactly one of many runs racing on one order act; every other one waits for a human", async () => {
    const runs = await Promise.all(Array.from({ length: 12 }, () => openRun("hooli")));
    const answers = await Promise.all(runs.map((run) => refundIn(run, "H0004", 900)));
    const codes = answers.map(({ body }) => body.error?.code ?? body.outcome);
    expect(codes.filter((code) => code === "success")).toHaveLength(1);
    expect(codes.filter((code) => code === "approval_required")).toHaveLength(11);
    expect(await refundsOf("H0004")).toHaveLength(1);
  });

  it("forgets an effect proven absent: the next run's refund of that order goes ahead", async () => {
    const first = await openRun("hooli");
    const lost = await callTool(first, "issue_refund", refund("H0005", 800), {
      "x-sandbox-fault": "silent_failure",
    });
    expect(lost.body.error).toMatchObject({ code: "silent_failure", side_effect_confirmed: false });
    const second = await openRun("hooli");
    const next = await refundIn(second, "H0005", 800);
    expect(next.body.outcome, JSON.stringify(next.body.error)).toBe("success");
    expect(await refundsOf("H0005")).toHaveLength(1);
  });

  it("counts another run's ticket on the same customer and summary as the same ticket at any priority, and another summary as another ticket", async () => {
    const summary = "Customer disputes a charge on the March invoice.";
    const ticket = (priority: string, about = summary) => ({ customer_id: "C204", priority, summary: about });
    const ticketsOfC204 = async () =>
      (
        await sandbox<{ tickets: Array<{ customer_id: string }> }>("/_admin/tickets?tenant=globex")
      ).tickets.filter((row) => row.customer_id === "C204");
    const first = await openRun("globex");
    const opened = await callTool(first, "create_internal_ticket", ticket("normal"));
    expect(opened.body.outcome, JSON.stringify(opened.body.error)).toBe("success");

    // Raised to high in another run: no approval of its own, held for the earlier ticket.
    const raised = await callTool(await openRun("globex"), "create_internal_ticket", ticket("high"));
    expect(raised.body.error?.code).toBe("approval_required");
    expect(detailsOf(raised.body).earlier_effects).toEqual([
      expect.objectContaining({
        run_id: first.id,
        tool: "support.create_internal_ticket",
        identity: { customer_id: "C204", summary },
      }),
    ]);

    // Raised to urgent (which always asks a human): the approval lists the earlier ticket, and
    // approving it needs the operator's confirmation that they saw it.
    const urgent = await callTool(await openRun("globex"), "create_internal_ticket", ticket("urgent"));
    const approvalId = urgent.body.approval?.id ?? "";
    expect(detailsOf(urgent.body).earlier_effects?.[0]).toMatchObject({ run_id: first.id });
    const unconfirmed = await decide(approvalId, "approve", "paged already?", "globex");
    expect(unconfirmed.status).toBe(409);
    expect(unconfirmed.body.error?.details).toMatchObject({ reason: "duplicate_unconfirmed" });
    expect(await ticketsOfC204()).toHaveLength(1);

    const otherMatter = await callTool(
      await openRun("globex"),
      "create_internal_ticket",
      ticket("normal", "Customer asks for a copy of the April invoice."),
    );
    expect(otherMatter.body.outcome, JSON.stringify(otherMatter.body.error)).toBe("success");
    expect(await ticketsOfC204()).toHaveLength(2);
  });

  it("lets a tool the tenant allows to repeat act again in another run without a human", async () => {
    const args = { ticket_id: "HD-1002", body: "Customer called again about the refund." };
    for (const run of [
      await openRun("acme", { namespace: "helpdesk" }),
      await openRun("acme", { namespace: "helpdesk" }),
    ]) {
      const { body } = await callTool(run, "add_ticket_note", args);
      expect(body.outcome, JSON.stringify(body.error)).toBe("success");
    }
  });
});

describe("value caps", () => {
  it("holds a refund that would pass an order's daily cap, naming the cap, used and remaining", async () => {
    const run = await openManyRefundsRun();
    expect((await refundIn(run, "H0010", 1000)).body.outcome).toBe("success");
    expect((await refundIn(run, "H0010", 999)).body.outcome).toBe("success");
    const { body } = await refundIn(run, "H0010", 600);
    expect(body.error?.code).toBe("approval_required");
    expect(detailsOf(body).limit).toEqual({
      cap: "per_subject_day",
      currency: "USD",
      subject: "H0010",
      limit: 2500,
      used: 1999,
      reserved: 0,
      remaining: 501,
      amount: 600,
    });
    expect(body.error?.message).toMatch(/daily per-subject USD cap for H0010/);
    expect(await refundsOf("H0010")).toHaveLength(2);
  });

  it("holds the refund that would pass the run's cap, and records an approval beyond it as an override", async () => {
    const run = await openManyRefundsRun();
    for (const order of ["H0011", "H0012", "H0013", "H0014"]) {
      const { body } = await refundIn(run, order, 1000);
      expect(body.outcome, JSON.stringify(body.error)).toBe("success");
    }
    const { body } = await refundIn(run, "H0015", 1);
    expect(body.error?.code).toBe("approval_required");
    expect(detailsOf(body).limit).toMatchObject({
      cap: "per_run",
      limit: 4000,
      used: 4000,
      remaining: 0,
      amount: 1,
    });
    const approved = await decide(detailsOf(body).approval_id, "approve", "goodwill", "hooli");
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);
    expect(await refundsOf("H0015")).toHaveLength(1);
    const usage = await asOperator("/v1/value-usage", {}, "hooli");
    expect(usage.status, JSON.stringify(usage.body.error)).toBe(200);
    const [usd] = (usage.body.data as { usage: Array<Record<string, unknown>> }).usage;
    expect(usd).toMatchObject({ currency: "USD", per_day: 50000 });
    expect(Number(usd?.used)).toBeGreaterThanOrEqual(4001);
  });

  it("releases the value of a refund proven absent, so the run can move it again", async () => {
    const run = await openManyRefundsRun();
    for (const order of ["H0021", "H0022", "H0023"]) {
      const { body } = await refundIn(run, order, 1000);
      expect(body.outcome, JSON.stringify(body.error)).toBe("success");
    }
    const lost = await callTool(run, "issue_refund", refund("H0024", 1000), {
      "x-sandbox-fault": "silent_failure",
    });
    expect(lost.body.error?.side_effect_confirmed).toBe(false);
    const next = await refundIn(run, "H0025", 1000);
    expect(next.body.outcome, JSON.stringify(next.body.error)).toBe("success");
  });
});

describe("reconciliation of claims no run committed", () => {
  function shard(name: string) {
    return env.EFFECT_SHARD.get(env.EFFECT_SHARD.idFromName(name)) as DurableObjectStub<EffectShard>;
  }

  it("asks the run: a key it holds keeps its claim, a key it never committed is released", async () => {
    const run = await openRun("hooli");
    // Above the auto-approval limit: the key is committed, held for a human.
    const held = await refundIn(run, "H0031", 2000);
    expect(held.body.error?.code).toBe("approval_required");
    const ledger = ledgerStubOf(run);
    expect(await ledger.effectFate("hooli", String(held.body.idempotency_key))).toBe("held");
    expect(await ledger.effectFate("hooli", "a-key-this-run-never-committed")).toBe("released");
    expect(await ledger.effectFate("globex", String(held.body.idempotency_key))).toBe("released");
  });

  it("releases a claim whose key its run never committed once reconciliation asked, not before", async () => {
    const run = await openRun("hooli");
    const stub = shard(`hooli-reconcile-${crypto.randomUUID()}`);
    const at = Date.now() - 60_000;
    const digest = `digest-${crypto.randomUUID()}`;
    const reservation = (key: string, runId: string) => ({
      tenant: "hooli",
      shard: 0,
      shards: 1,
      identity: true,
      per_day: null,
      per_subject_day: null,
      claim: {
        key,
        run_id: runId,
        tool: "support.issue_refund",
        identity: { order_id: "H0030" },
        identity_digest: digest,
        window_ms: 86_400_000,
        args: refund("H0030", 100),
        at,
        day: new Date(at).toISOString().slice(0, 10),
        value: null,
        repeatable: false,
      },
    });
    // A claim of a key the run never committed (its ledger stopped between the claim and the commit).
    await stub.reserve(reservation("never-committed", run.id));
    const before: ShardVerdict = await stub.reserve(reservation("other-run-key", "run_other"));
    expect(before.earlier).toEqual([expect.objectContaining({ run_id: run.id, outcome: "reserved" })]);
    await runDurableObjectAlarm(stub);
    const after: ShardVerdict = await stub.reserve(reservation("third-run-key", "run_third"));
    // Released: no earlier effect any more, but the other run's claim (never committed either) is
    // still there until its own run answers: "run_other" has no ledger, so it is released too.
    expect(after.earlier.map((effect) => effect.run_id)).not.toContain(run.id);
  });
});
