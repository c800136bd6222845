import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ValueTotals } from "../../src/effects/caps";
import type { EffectClaim } from "../../src/effects/claim";
import type { EffectFate } from "../../src/effects/fate";
import {
  alarmForClaim,
  applyUpdate,
  decideReservation,
  type LeaseHeld,
  leaseAsk,
  leaseLacking,
  leaseNeed,
  nextAlarm,
  overridesToCover,
  pruneBefore,
  RECONCILE_AFTER_MS,
  reconciledFate,
  type ShardReads,
  type ShardReservation,
  type ValueState,
} from "../../src/effects/shard-rules";
import type { EarlierEffect } from "../../src/wire/effects";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);

/**
 * What an effect shard decides (src/effects/shard-rules.ts), over a shard's rows held in memory: the
 * reads below answer what ledger/effect-shard.ts's statements answer of its table. The shard itself,
 * its pool and its races are tested in workerd (test/workerd/effect-shards.property.test.ts).
 */

const DAY = "2026-12-02";
const AT = Date.UTC(2026, 11, 2, 12, 0, 0);

interface Row {
  key: string;
  amount: number;
  subject: string | null;
  fate: EffectFate;
  value_state: ValueState;
  day_role: boolean;
  subject_role: boolean;
}

/** A shard's live rows and its lease of the day, read as the shard's statements read them. */
function shardOf(rows: Row[], lease: LeaseHeld, earlier: EarlierEffect[] = []): ShardReads {
  const live = (row: Row) => row.fate !== "released";
  const totals = (matching: Row[]): ValueTotals => {
    const held = matching.filter(
      (row) => live(row) && (row.value_state === "counted" || row.value_state === "override"),
    );
    const sum = (of: Row[]) => of.reduce((total, row) => total + row.amount, 0);
    return {
      used: sum(held.filter((row) => row.fate === "confirmed" || row.value_state === "override")),
      reserved: sum(held.filter((row) => row.fate !== "confirmed" && row.value_state === "counted")),
    };
  };
  return {
    subjectTotals: (_currency, _day, subject) =>
      totals(rows.filter((row) => row.subject_role && row.subject === subject)),
    dayHeld: () =>
      rows
        .filter(
          (row) => row.day_role && live(row) && row.value_state !== "over" && row.value_state !== "none",
        )
        .reduce((total, row) => total + row.amount, 0),
    dayTotals: () => totals(rows.filter((row) => row.day_role)),
    // These rows name no user: the per-user caps are tested through the Worker (user-caps.test.ts).
    userTotals: () => totals([]),
    userDestructive: () => totals([]),
    lease: () => lease,
    earlier: () => earlier,
  };
}

function claimOf(amount: number | null, overrides: Partial<EffectClaim> = {}): EffectClaim {
  return {
    key: "idk_new",
    run_id: "run_new",
    tool: "support.issue_refund",
    identity: { order_id: "A1" },
    identity_digest: "digest-A1",
    window_ms: 24 * 60 * 60 * 1000,
    args: { order_id: "A1", amount_cents: amount },
    at: AT,
    day: DAY,
    value: amount === null ? null : { amount, currency: "USD", subject: "A1", subject_in_identity: true },
    repeatable: false,
    ...overrides,
  };
}

function request(
  claim: EffectClaim,
  caps: { per_day?: number; per_subject_day?: number } = {},
): ShardReservation {
  return {
    tenant: "hooli",
    shard: 0,
    shards: 4,
    claim,
    identity: true,
    per_day: caps.per_day ?? null,
    per_subject_day: caps.per_subject_day ?? null,
  };
}

const counted = (key: string, amount: number, more: Partial<Row> = {}): Row => ({
  key,
  amount,
  subject: "A1",
  fate: "pending",
  value_state: "counted",
  day_role: true,
  subject_role: true,
  ...more,
});

const earlierRefund: EarlierEffect = {
  run_id: "run_old",
  tool: "support.issue_refund",
  at: new Date(AT - 60_000).toISOString(),
  args: { order_id: "A1" },
  identity: { order_id: "A1" },
  outcome: "sent",
  external_id: null,
};

describe("a shard's reservation", () => {
  it("counts a claim without a value against no cap, and leases nothing for it", () => {
    const reads = shardOf([], { granted: 0, leased: 0 });
    const claim = request(claimOf(null), { per_day: 1000, per_subject_day: 500 });
    expect(leaseNeed(claim, reads)).toBeNull();
    expect(decideReservation(claim, reads)).toEqual({
      verdict: { earlier: [], over: null },
      day_role: false,
      subject_role: true,
      user_role: false,
      value_state: "none",
      day_cap: null,
    });
  });

  it("lists the earlier effects only in the identity's shard, and none for a tool the tenant lets repeat", () => {
    const reads = shardOf([], { granted: 0, leased: 0 }, [earlierRefund]);
    expect(decideReservation(request(claimOf(null)), reads).verdict.earlier).toEqual([earlierRefund]);
    expect(decideReservation({ ...request(claimOf(null)), identity: false }, reads).verdict.earlier).toEqual(
      [],
    );
    expect(decideReservation(request(claimOf(null, { repeatable: true })), reads).verdict.earlier).toEqual(
      [],
    );
  });

  it("asks for the lease a valued claim lacks, and nothing once the lease holds it", () => {
    const rows = [counted("a", 300), counted("b", 200, { value_state: "override" })];
    const claim = request(claimOf(150), { per_day: 10_000 });
    const need = leaseNeed(claim, shardOf(rows, { granted: 500, leased: 500 }));
    expect(need).toEqual({ currency: "USD", day: DAY, amount: 150, cap: 10_000 });
    if (!need) throw new Error("no need");
    expect(leaseLacking(need, shardOf(rows, { granted: 500, leased: 500 }))).toBe(150);
    expect(leaseLacking(need, shardOf(rows, { granted: 700, leased: 900 }))).toBe(-50);
  });

  it("leases nothing for a claim its subject's cap already holds: it waits for a human whatever the lease", () => {
    const reads = shardOf([counted("a", 400)], { granted: 0, leased: 0 });
    const claim = request(claimOf(200), { per_day: 10_000, per_subject_day: 500 });
    expect(leaseNeed(claim, reads)).toBeNull();
    expect(decideReservation(claim, reads)).toMatchObject({
      verdict: {
        over: { cap: "per_subject_day", subject: "A1", limit: 500, used: 0, reserved: 400, remaining: 100 },
      },
      value_state: "over",
      day_role: true,
      subject_role: true,
      day_cap: 10_000,
    });
  });

  it("tells the subject's cap before the day's when the claim exceeds both", () => {
    const reads = shardOf([counted("a", 400)], { granted: 400, leased: 400 });
    const claim = request(claimOf(200), { per_day: 500, per_subject_day: 500 });
    expect(decideReservation(claim, reads).verdict.over?.cap).toBe("per_subject_day");
  });

  it("fits a claim its lease holds, and counts it", () => {
    const reads = shardOf([counted("a", 300)], { granted: 500, leased: 2000 });
    expect(decideReservation(request(claimOf(200), { per_day: 2000 }), reads)).toMatchObject({
      verdict: { over: null },
      value_state: "counted",
      day_cap: 2000,
    });
  });

  it("tells a claim beyond its lease against the day's cap, the other shards' parts counted as used", () => {
    const rows = [counted("a", 300, { fate: "confirmed" }), counted("b", 100)];
    const reads = shardOf(rows, { granted: 400, leased: 1000 });
    expect(decideReservation(request(claimOf(200), { per_day: 1000 }), reads).verdict.over).toEqual({
      cap: "per_day",
      currency: "USD",
      subject: null,
      limit: 1000,
      used: 300 + 600,
      reserved: 100,
      remaining: 0,
      amount: 200,
    });
  });

  it("does not fit a claim its lease is short of even where the day's cap has room", () => {
    const reads = shardOf([counted("a", 100)], { granted: 100, leased: 100 });
    expect(decideReservation(request(claimOf(50), { per_day: 1000 }), reads).verdict.over).toEqual({
      cap: "per_day",
      currency: "USD",
      subject: null,
      limit: 1000,
      used: 0,
      reserved: 100,
      remaining: 900,
      amount: 50,
    });
  });

  it("asks the pool for at least a part of the cap, and needs only what it lacks", () => {
    expect(leaseAsk(100, 10, 1000, 5)).toEqual({ want: 100 + 50, need: 110 });
    expect(leaseAsk(100, 80, 1000, 5)).toEqual({ want: 180, need: 180 });
  });

  it("keeps what a shard counts within its lease and each subject's cap, claim after claim", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2000 }),
        fc.integer({ min: 1, max: 800 }),
        fc.array(
          fc.record({ amount: fc.integer({ min: 1, max: 400 }), subject: fc.constantFrom("A1", "A2", "A3") }),
          { maxLength: 25 },
        ),
        (granted, perSubject, claims) => {
          const rows: Row[] = [];
          const lease = { granted, leased: granted };
          const sum = (of: Row[]) => of.reduce((total, row) => total + row.amount, 0);
          const countedOf = (of: Row[]) => of.filter((row) => row.value_state === "counted");
          for (const [n, { amount, subject }] of claims.entries()) {
            const claim = claimOf(null, {
              key: `idk_${n}`,
              value: { amount, currency: "USD", subject, subject_in_identity: true },
            });
            const decided = decideReservation(
              request(claim, { per_day: 10_000, per_subject_day: perSubject }),
              shardOf(rows, lease),
            );
            // Refused exactly when it would not fit: one that fits both the lease and its subject's cap is counted.
            const fits =
              sum(countedOf(rows)) + amount <= granted &&
              sum(countedOf(rows).filter((row) => row.subject === subject)) + amount <= perSubject;
            expect(decided.verdict.over === null).toBe(fits);
            rows.push({
              key: claim.key,
              amount,
              subject,
              fate: "pending",
              value_state: decided.value_state,
              day_role: decided.day_role,
              subject_role: decided.subject_role,
            });
          }
          expect(sum(countedOf(rows))).toBeLessThanOrEqual(granted);
          for (const subject of ["A1", "A2", "A3"])
            expect(sum(countedOf(rows).filter((row) => row.subject === subject))).toBeLessThanOrEqual(
              perSubject,
            );
        },
      ),
      plan({ seed: 20261202, numRuns: 300 }),
    );
  });
});

describe("a shard's update of a claim", () => {
  const row = (fate: EffectFate, value_state: ValueState, day_cap: number | null = 1000) => ({
    fate,
    value_state,
    currency: "USD",
    day_cap,
  });
  const update = (fate: EffectFate, override = false) => ({
    key: "idk_1",
    fate,
    external_id: null,
    override,
  });

  it("moves a claim's fate only forwards", () => {
    expect(applyUpdate(row("pending", "counted"), update("sent")).fate).toBe("sent");
    expect(applyUpdate(row("sent", "counted"), update("held")).fate).toBe("sent");
    expect(applyUpdate(row("released", "counted"), update("confirmed")).fate).toBe("released");
  });

  it("turns a value over the cap into an override once an operator's approval sent it, and charges it to the day", () => {
    expect(applyUpdate(row("held", "over"), update("sent", true))).toEqual({
      fate: "sent",
      value_state: "override",
      charge: true,
    });
    expect(applyUpdate(row("held", "over"), update("held", true))).toMatchObject({
      value_state: "over",
      charge: false,
    });
    expect(applyUpdate(row("held", "over"), update("sent"))).toMatchObject({
      value_state: "over",
      charge: false,
    });
    expect(applyUpdate(row("held", "counted"), update("sent", true))).toMatchObject({
      value_state: "counted",
      charge: false,
    });
  });

  it("charges an override only to a daily cap it was decided against", () => {
    expect(applyUpdate(row("held", "over", null), update("confirmed", true))).toEqual({
      fate: "confirmed",
      value_state: "override",
      charge: false,
    });
  });

  it("moves a value's state only from over to override, whatever reports arrive in whatever order", () => {
    const fates: EffectFate[] = ["pending", "held", "sent", "confirmed", "released"];
    const states: ValueState[] = ["none", "counted", "over"];
    fc.assert(
      fc.property(
        fc.constantFrom(...states),
        fc.array(fc.record({ fate: fc.constantFrom(...fates), override: fc.boolean() }), { maxLength: 12 }),
        (start, reports) => {
          let current = row("pending", start);
          for (const report of reports) {
            const applied = applyUpdate(current, update(report.fate, report.override));
            if (applied.value_state !== current.value_state) {
              expect([current.value_state, applied.value_state]).toEqual(["over", "override"]);
              expect(["sent", "confirmed"]).toContain(applied.fate);
            }
            current = { ...current, fate: applied.fate, value_state: applied.value_state };
          }
        },
      ),
      plan({ seed: 20261202, numRuns: 300 }),
    );
  });

  it("asks the pool to cover what overrides hold past the shard's part, and nothing within it", () => {
    expect(overridesToCover(700, { granted: 500, leased: 900 })).toBe(700);
    expect(overridesToCover(500, { granted: 500, leased: 900 })).toBeNull();
  });
});

describe("a shard's reconciliation and alarm", () => {
  it("writes the fate its ledger answers, and nothing while a call still decides the key", () => {
    expect(reconciledFate("released")).toBe("released");
    expect(reconciledFate("confirmed")).toBe("confirmed");
    expect(reconciledFate("deciding")).toBeNull();
  });

  it("moves the alarm to reconcile a new claim, unless it rings sooner already", () => {
    const now = AT + 100;
    expect(alarmForClaim(AT, now, null)).toBe(AT + RECONCILE_AFTER_MS);
    expect(alarmForClaim(AT, now, AT + 2 * 24 * 60 * 60 * 1000)).toBe(AT + RECONCILE_AFTER_MS);
    expect(alarmForClaim(AT, now, AT + 1000)).toBeNull();
    // A claim made long ago (a replayed clock) is asked about a moment from now, not in the past.
    expect(alarmForClaim(AT - 60_000, now, null)).toBe(now + 1000);
  });

  it("rings next for the first pending claim, else for the next prune, else not at all", () => {
    const now = AT + 60_000;
    expect(nextAlarm(AT, AT - 1000, now)).toBe(now + 1000);
    expect(nextAlarm(now, AT - 1000, now)).toBe(now + RECONCILE_AFTER_MS);
    expect(nextAlarm(null, AT, now)).toBe(AT + 2 * 24 * 60 * 60 * 1000);
    expect(nextAlarm(null, null, now)).toBeNull();
  });

  it("prunes settled rows a day past their window and two past their making, and leases of days past", () => {
    const day = 24 * 60 * 60 * 1000;
    expect(pruneBefore(AT)).toEqual({ until: AT - day, at: AT - 2 * day, leaseDay: "2026-11-30" });
  });
});
