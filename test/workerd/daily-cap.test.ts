import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseTenants, type TenantConfig } from "../../src/config/tenants";
import { sha256Hex } from "../../src/core/digest";
import { type EffectClaim, shardOf, subjectDigest, utcDay } from "../../src/effects/claim";
import { RECONCILE_AFTER_MS } from "../../src/effects/shard-rules";
import type { EffectShard } from "../../src/ledger/effect-shard";
import { claimTenantWide, reportEffect } from "../../src/ledger/effects-client";

/**
 * The tenant's daily value cap as its effect shards and its cap pool keep it, through the step a
 * run's ledger takes (`claimTenantWide`) and checked at the source (the pool's parts). Each test has
 * a tenant of its own, configured here: its shards and its caps.
 */

const CURRENCY = "USD";
const DAY_MS = 24 * 60 * 60 * 1000;
const hooli = parseTenants(env.TENANTS).hooli as TenantConfig;

/**
 * Claims are made ahead of the clock: no run's ledger commits them, so a shard's reconciliation
 * would release each one RECONCILE_AFTER_MS after its time, halfway through a slow test.
 */
const AT = Date.now() + 100 * RECONCILE_AFTER_MS;

function tenantWith(shards: number, caps: { per_day?: number; per_subject_day?: number }) {
  const tenant = `daily-cap-${crypto.randomUUID().slice(0, 8)}`;
  const config: TenantConfig = {
    ...hooli,
    effect_shards: shards,
    repeat_effects: {},
    value_caps: { [CURRENCY]: caps },
  };
  return { tenant, config };
}

/** A refund of an order moving `amount` cents, as a run's ledger claims it. */
async function refund(key: string, order: string, amount: number, at = AT): Promise<EffectClaim> {
  const identity = { order_id: order };
  return {
    key,
    run_id: `run_${key}`,
    tool: "support.issue_refund",
    identity,
    identity_digest: await sha256Hex(JSON.stringify({ tool: "support.issue_refund", identity })),
    window_ms: DAY_MS,
    args: { ...identity, amount_cents: amount, reason: "user_cancel" },
    at,
    day: utcDay(at),
    value: { amount, currency: CURRENCY, subject: order, subject_in_identity: true },
    repeatable: false,
  };
}

/** An order whose refunds live in `shard` (a refund's identity names its order, its subject). */
async function orderIn(shard: number, shards: number, prefix: string): Promise<string> {
  for (let n = 0; ; n++) {
    const order = `${prefix}${n}`;
    const digest = subjectDigest(await refund("probe", order, 1));
    if (digest && shardOf(await digest, shards) === shard) return order;
  }
}

/** Each shard's part of the day's cap, as the tenant's pool holds them. */
async function partsOf(tenant: string, day = utcDay(AT)): Promise<Record<number, number>> {
  const pool = env.CAP_POOL.get(env.CAP_POOL.idFromName(`${tenant}/${CURRENCY}/${day}`));
  const rows = await runInDurableObject(pool, (_instance, state) =>
    state.storage.sql.exec<{ shard: number; granted: number }>("SELECT shard, granted FROM leases").toArray(),
  );
  return Object.fromEntries(rows.map((row) => [row.shard, row.granted]));
}

describe("the daily cap's room", () => {
  it("holds a claim larger than all the room left without leasing any of it, so small claims fit in every shard", async () => {
    const shards = 8;
    const { tenant, config } = tenantWith(shards, { per_day: 50000 });
    const big = await claimTenantWide(env, tenant, config, await refund("big", "B", 60000));
    expect(big.over).toMatchObject({ cap: "per_day", limit: 50000, used: 0, reserved: 0, amount: 60000 });
    expect((await partsOf(tenant))[big.shards[0] as number]).toBeUndefined();
    for (let shard = 0; shard < shards; shard++) {
      const order = await orderIn(shard, shards, "S");
      const small = await claimTenantWide(env, tenant, config, await refund(`small-${shard}`, order, 100));
      expect(small.shards).toEqual([shard]);
      expect(small.over, `a refund of 100 in shard ${shard}`).toBeNull();
    }
  });

  it("leases nothing for a claim its subject's cap holds, so the day's room stays for calls in other shards", async () => {
    const { tenant, config } = tenantWith(2, { per_day: 1000, per_subject_day: 300 });
    const [first, second] = [await orderIn(0, 2, "F"), await orderIn(1, 2, "G")];
    const overSubject = await claimTenantWide(env, tenant, config, await refund("over-subject", first, 900));
    expect(overSubject.over).toMatchObject({ cap: "per_subject_day", subject: first, limit: 300 });
    expect(await partsOf(tenant)).toEqual({});
    const elsewhere = await claimTenantWide(env, tenant, config, await refund("elsewhere", second, 300));
    expect(elsewhere.over).toBeNull();
  });
});

/** Where three orders' refunds live, by shard; a tenant of one shard keeps them all in shard 0. */
const PLACEMENTS = [
  { name: "all in one shard", shards: 1, places: [0, 0, 0] },
  { name: "each in a shard of its own", shards: 4, places: [0, 1, 2] },
  { name: "the next one in the override's shard", shards: 4, places: [0, 1, 1] },
  { name: "the next one in the first one's shard", shards: 4, places: [0, 1, 0] },
];

/** The refund's fate as its run's ledger reports it: sent, then confirmed, with whether an operator approved it beyond a cap. */
async function confirm(tenant: string, shards: readonly number[], key: string, override: boolean) {
  for (const fate of ["sent", "confirmed"] as const)
    await reportEffect(env, tenant, shards, { key, fate, external_id: `re_${key}`, override });
}

describe("an operator's approval beyond the daily cap", () => {
  it.each(PLACEMENTS)(
    "counts as used: the next claim that would pass the cap waits ($name)",
    async ({ shards, places }) => {
      const { tenant, config } = tenantWith(shards, { per_day: 1000 });
      const [a, b, c] = await Promise.all(places.map((shard, n) => orderIn(shard, shards, `O${n}-`)));
      const first = await claimTenantWide(env, tenant, config, await refund("first", a as string, 800));
      expect(first.over).toBeNull();
      await confirm(tenant, first.shards, "first", false);
      const approved = await claimTenantWide(env, tenant, config, await refund("approved", b as string, 500));
      expect(approved.over).toMatchObject({ cap: "per_day", amount: 500 });
      await confirm(tenant, approved.shards, "approved", true);
      const next = await claimTenantWide(env, tenant, config, await refund("next", c as string, 200));
      expect(next.over).toMatchObject({ cap: "per_day", limit: 1000, remaining: 0, amount: 200 });
    },
  );

  it.each(PLACEMENTS)(
    "takes its value from the day's room and no more: what is left still fits ($name)",
    async ({ shards, places }) => {
      // Held for its order's cap, not the day's: approved, its 600 leave 100 of the day for the next claims.
      const { tenant, config } = tenantWith(shards, { per_day: 1000, per_subject_day: 500 });
      const [a, b, c] = await Promise.all(places.map((shard, n) => orderIn(shard, shards, `R${n}-`)));
      const first = await claimTenantWide(env, tenant, config, await refund("first", a as string, 300));
      expect(first.over).toBeNull();
      await confirm(tenant, first.shards, "first", false);
      const approved = await claimTenantWide(env, tenant, config, await refund("approved", b as string, 600));
      expect(approved.over).toMatchObject({ cap: "per_subject_day", subject: b });
      await confirm(tenant, approved.shards, "approved", true);
      // Reported again, as an outbox may: charged once.
      await confirm(tenant, approved.shards, "approved", true);
      const parts = Object.values(await partsOf(tenant));
      expect(parts.reduce((sum, part) => sum + part, 0)).toBeLessThanOrEqual(1000);
      const tooMuch = await claimTenantWide(env, tenant, config, await refund("too-much", c as string, 101));
      expect(tooMuch.over).toMatchObject({ cap: "per_day", amount: 101 });
      const fits = await claimTenantWide(env, tenant, config, await refund("fits", c as string, 100));
      expect(fits.over).toBeNull();
    },
  );
});

describe("a claim made again on a later day", () => {
  it("counts in the day it is made again, for the daily and the subject's cap", async () => {
    const { tenant, config } = tenantWith(1, { per_day: 1000, per_subject_day: 1000 });
    const midnight = Date.parse(`${utcDay(AT + DAY_MS)}T00:00:00Z`);
    const [yesterday, today] = [utcDay(midnight - 1), utcDay(midnight)];
    const late = await claimTenantWide(env, tenant, config, await refund("late", "P", 800, midnight - 2_000));
    expect(late.over).toBeNull();
    // No ledger committed it (its run stopped before the commit): released, as reconciliation does.
    await reportEffect(env, tenant, late.shards, {
      key: "late",
      fate: "released",
      external_id: null,
      override: false,
    });
    const again = await claimTenantWide(
      env,
      tenant,
      config,
      await refund("late", "P", 800, midnight + 1_000),
    );
    expect(again.over).toBeNull();

    const otherOrder = await claimTenantWide(
      env,
      tenant,
      config,
      await refund("other", "Q", 300, midnight + 2_000),
    );
    expect(otherOrder.over).toMatchObject({ cap: "per_day", reserved: 800, amount: 300 });
    const sameOrder = await claimTenantWide(
      env,
      tenant,
      config,
      await refund("same", "P", 300, midnight + 3_000),
    );
    expect(sameOrder.over).toMatchObject({
      cap: "per_subject_day",
      subject: "P",
      reserved: 800,
      amount: 300,
    });
    const shard = env.EFFECT_SHARD.get(
      env.EFFECT_SHARD.idFromName(`${tenant}/0`),
    ) as DurableObjectStub<EffectShard>;
    expect(await shard.usage(CURRENCY, today)).toMatchObject({ used: 0, reserved: 800 });
    expect(await shard.usage(CURRENCY, yesterday)).toMatchObject({ used: 0, reserved: 0 });
  });
});
