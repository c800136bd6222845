import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { parseTenants } from "../../src/config/tenants";
import { capLimit, leasePart, leaseWant } from "../../src/effects/caps";
import { claimOf, shardOf, utcDay } from "../../src/effects/claim";
import { advanceFate, type EffectFate, fateOfKey } from "../../src/effects/fate";
import { crossRunReasons, effectsToConfirm } from "../../src/effects/reasons";
import { catalog } from "../../src/tools";
import type { EarlierEffect } from "../../src/wire/effects";
import { type Envelope, failure, success } from "../../src/wire/envelope";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);

/**
 * The pure rules of effects across runs (src/effects/): what a call claims, how far a claimed effect
 * got and the order those fates move in, the caps' arithmetic, and the words a human is shown.
 */

const NOW = Date.UTC(2026, 11, 2, 23, 59, 0);
const refund = catalog.find("support", "issue_refund") as ToolSpec;
const ticket = catalog.find("support", "create_internal_ticket") as ToolSpec;
const note = catalog.find("helpdesk", "add_ticket_note") as ToolSpec;
const tenant = parseTenants({
  hooli: {
    namespaces: ["support", "helpdesk"],
    ceilings: { max_calls: 10, max_writes: 10, max_destructive: 10, deadline_s: 60 },
    max_refund_cents: 5000,
    repeat_effects: { helpdesk: ["add_ticket_note"] },
  },
}).hooli;
if (!tenant) throw new Error("no tenant");

const claim = (tool: ToolSpec, args: Record<string, unknown>) =>
  claimOf({ tool, tenant, key: "idk_1", run_id: "run_1", args, trace_args: args, now: NOW, user: null });

describe("a call's claim", () => {
  it("names a refund by its order: another amount or reason is the same identity", async () => {
    const first = await claim(refund, { order_id: "H0001", amount_cents: 700, reason: "user_cancel" });
    const other = await claim(refund, { order_id: "H0001", amount_cents: 699, reason: "price_error" });
    const elsewhere = await claim(refund, { order_id: "H0002", amount_cents: 700, reason: "user_cancel" });
    expect(first?.identity).toEqual({ order_id: "H0001" });
    expect(other?.identity_digest).toBe(first?.identity_digest);
    expect(elsewhere?.identity_digest).not.toBe(first?.identity_digest);
    expect(first).toMatchObject({
      tool: "support.issue_refund",
      day: "2026-12-02",
      window_ms: 24 * 60 * 60 * 1000,
      value: { amount: 700, currency: "USD", subject: "H0001", subject_in_identity: true },
      repeatable: false,
    });
  });

  it("names a refund per user where the run acts for one: their user is part of its identity", async () => {
    const args = { order_id: "W0001", amount_cents: 700, reason: "user_cancel" };
    const userOf = (sub: string) => ({ sub, iss: "https://idp.example", name: null, claims: {} });
    const as = (user: ReturnType<typeof userOf> | null, extra: Record<string, unknown> = {}) =>
      claimOf({
        tool: refund,
        tenant,
        key: "idk_1",
        run_id: "run_1",
        args: { ...args, ...extra },
        trace_args: args,
        now: NOW,
        user,
      });
    const alice = await as(userOf("alice"));
    const aliceAgain = await as(userOf("alice"), { amount_cents: 300 });
    const bob = await as(userOf("bob"));
    const nobody = await as(null);
    expect(alice?.identity).toEqual({ order_id: "W0001", "@user": "https://idp.example alice" });
    expect(aliceAgain?.identity_digest).toBe(alice?.identity_digest);
    expect(bob?.identity_digest).not.toBe(alice?.identity_digest);
    expect(nobody?.identity).toEqual({ order_id: "W0001" });
    // An argument cannot stand for the run's user, nor hide it.
    const posing = await as(userOf("alice"), { "@user": "https://idp.example bob" });
    expect(posing?.identity).toEqual(alice?.identity);
    expect(alice).toMatchObject({ user: { sub: "alice" }, destructive: true });
  });

  it("names a ticket by its customer and summary: another priority is the same identity, another summary not", async () => {
    const args = { customer_id: "C100", priority: "low", summary: "Invoice copy." };
    const first = await claim(ticket, args);
    const raised = await claim(ticket, { ...args, priority: "urgent" });
    const otherMatter = await claim(ticket, { ...args, summary: "Address change." });
    expect(first?.identity).toEqual({ customer_id: "C100", summary: "Invoice copy." });
    expect(raised?.identity_digest).toBe(first?.identity_digest);
    expect(otherMatter?.identity_digest).not.toBe(first?.identity_digest);
    expect(first?.repeatable).toBe(false);
  });

  it("names a tool without a declared identity by all its arguments, and says when the tenant lets it repeat", async () => {
    const args = { ticket_id: "HD-1001", body: "Refund issued." };
    const first = await claim(note, args);
    const reordered = await claim(note, { body: "Refund issued.", ticket_id: "HD-1001" });
    const other = await claim(note, { ...args, body: "Refund issued, see A1001." });
    expect(first?.identity).toEqual(args);
    expect(reordered?.identity_digest).toBe(first?.identity_digest);
    expect(other?.identity_digest).not.toBe(first?.identity_digest);
    expect(first?.value).toBeNull();
    expect(first?.repeatable).toBe(true);
  });

  it("claims nothing for a read", async () => {
    const read = catalog.find("support", "lookup_order") as ToolSpec;
    expect(await claim(read, { order_id: "H0001" })).toBeNull();
  });

  it("counts a claim in the UTC day it was made", () => {
    expect(utcDay(Date.UTC(2026, 11, 2, 23, 59, 59, 999))).toBe("2026-12-02");
    expect(utcDay(Date.UTC(2026, 11, 3))).toBe("2026-12-03");
  });

  it("puts a digest in one of the shards, always the same one", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-f]{64}$/), fc.integer({ min: 1, max: 64 }), (digest, shards) => {
        const shard = shardOf(digest, shards);
        expect(shard).toBeGreaterThanOrEqual(0);
        expect(shard).toBeLessThan(shards);
        expect(shardOf(digest, shards)).toBe(shard);
      }),
      plan({ seed: 20261202, numRuns: 200 }),
    );
  });
});

const FATES: EffectFate[] = ["pending", "held", "sent", "confirmed", "released"];

describe("how far a claimed effect got", () => {
  it("only ever moves forward, and never out of confirmed or released", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...FATES), { maxLength: 12 }), (reports) => {
        let fate: EffectFate = "pending";
        const seen: EffectFate[] = [fate];
        for (const report of reports) {
          fate = advanceFate(fate, report);
          seen.push(fate);
        }
        const rank = (f: EffectFate) => ({ pending: 0, held: 1, sent: 2, confirmed: 3, released: 3 })[f];
        for (let i = 1; i < seen.length; i++) {
          const [before, after] = [seen[i - 1] as EffectFate, seen[i] as EffectFate];
          expect(rank(after)).toBeGreaterThanOrEqual(rank(before));
          if (before === "confirmed" || before === "released") expect(after).toBe(before);
        }
      }),
      plan({ seed: 20261202, numRuns: 300 }),
    );
  });

  const context = { call_id: "call_1", environment: "sandbox" as const };
  const completed = (envelope: Envelope) => ({ state: "completed" as const, envelope });

  it("reads a committed key: held waits, a decision against it releases, a send counts, an answer decides", () => {
    expect(fateOfKey(null, null)).toBe("released");
    expect(fateOfKey({ state: "held", envelope: null }, { state: "pending" })).toBe("held");
    expect(fateOfKey({ state: "held", envelope: null }, { state: "rejected" })).toBe("released");
    expect(fateOfKey({ state: "held", envelope: null }, { state: "expired" })).toBe("released");
    expect(fateOfKey({ state: "sending", envelope: null }, null)).toBe("sent");
    expect(fateOfKey({ state: "in_doubt", envelope: null }, null)).toBe("sent");
    expect(fateOfKey(completed(success(context, { refund_id: "rf_1" })), null)).toBe("confirmed");
    const refuted = failure(context, {
      code: "silent_failure",
      message: "no refund",
      side_effect_confirmed: false,
    });
    expect(fateOfKey(completed(refuted), null)).toBe("released");
    const unknown = failure(context, { code: "timeout", message: "no answer", side_effect_confirmed: null });
    expect(fateOfKey(completed(unknown), null)).toBe("sent");
  });
});

describe("the caps' arithmetic", () => {
  const value = { amount: 600, currency: "USD", subject: "H0010" };

  it("lets a call fit exactly at the cap, and names used, reserved and remaining past it", () => {
    expect(capLimit("per_subject_day", 2500, { used: 1500, reserved: 400 }, value)).toBeNull();
    expect(capLimit("per_subject_day", 2500, { used: 1999, reserved: 0 }, value)).toEqual({
      cap: "per_subject_day",
      currency: "USD",
      subject: "H0010",
      limit: 2500,
      used: 1999,
      reserved: 0,
      remaining: 501,
      amount: 600,
    });
    // A run's or a day's cap names no subject; an override past the cap leaves nothing remaining.
    expect(capLimit("per_run", 4000, { used: 4200, reserved: 0 }, value)).toMatchObject({
      subject: null,
      remaining: 0,
    });
  });

  it("leases what a shard lacks, or a part of the cap when that is more", () => {
    expect(leasePart(50_000, 8)).toBe(1563);
    expect(leaseWant(437, 50_000, 8)).toBe(1563);
    expect(leaseWant(5000, 50_000, 8)).toBe(5000);
  });
});

describe("what a human is shown", () => {
  const earlier: EarlierEffect = {
    run_id: "run_first",
    tool: "support.issue_refund",
    at: "2026-12-02T10:00:00.000Z",
    args: { order_id: "H0001", amount_cents: 700, reason: "user_cancel" },
    identity: { order_id: "H0001" },
    outcome: "awaiting_approval",
    external_id: null,
  };

  it("names the earlier effect's identity, run, time and outcome, and how many more there are", () => {
    expect(crossRunReasons([earlier, { ...earlier, run_id: "run_second" }], null)).toEqual([
      "another run already acted on the same order_id H0001 (run run_first at 2026-12-02T10:00:00.000Z, awaiting approval) and 1 more",
    ]);
    expect(crossRunReasons([{ ...earlier, outcome: "confirmed", external_id: "rf_9" }], null)[0]).toContain(
      "confirmed, rf_9",
    );
  });

  it("names the cap a call would exceed with its figures", () => {
    const limit = capLimit(
      "per_day",
      50_000,
      { used: 49_500, reserved: 0 },
      { ...earlier, amount: 1000, currency: "USD", subject: null },
    );
    expect(crossRunReasons([], limit)).toEqual([
      "it would exceed the daily USD cap: 49500 used and 0 reserved of 50000, this call moves 1000",
    ]);
  });

  it("shows no earlier effect for a tool the tenant lets repeat", async () => {
    const repeatable = await claim(note, { ticket_id: "HD-1001", body: "Refund issued." });
    if (!repeatable) throw new Error("no claim");
    expect(effectsToConfirm({ claim: repeatable, earlier: [earlier] })).toEqual([]);
    const notRepeatable = { ...repeatable, repeatable: false };
    expect(effectsToConfirm({ claim: notRepeatable, earlier: [earlier] })).toEqual([earlier]);
  });
});
