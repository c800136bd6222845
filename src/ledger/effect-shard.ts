import { DurableObject } from "cloudflare:workers";
import { tenantObject } from "../config/placement";
import { applyMigrations } from "../core/sql-migrations";
import type { ValueTotals } from "../effects/caps";
import { type EffectClaim, userKey } from "../effects/claim";
import { type EffectFate, earlierOutcome } from "../effects/fate";
import {
  alarmForClaim,
  applyUpdate,
  decideReservation,
  type EffectUpdate,
  type LeaseHeld,
  leaseAsk,
  leaseLacking,
  leaseNeed,
  nextAlarm,
  overridesToCover,
  pruneBefore,
  reconcileDue,
  reconciledFate,
  type ShardReads,
  type ShardReservation,
  type ShardVerdict,
  type ValueState,
} from "../effects/shard-rules";
import type { Env } from "../env";
import type { EarlierEffect, ValueUsage } from "../wire/effects";
import type { CapPool } from "./cap-pool";
import { ledgerFor } from "./client";

const V1 = `
CREATE TABLE IF NOT EXISTS effects (
  key TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  identity_digest TEXT,
  identity TEXT NOT NULL,
  args TEXT NOT NULL,
  at INTEGER NOT NULL,
  until INTEGER NOT NULL,
  fate TEXT NOT NULL,
  generation INTEGER NOT NULL,
  external_id TEXT,
  currency TEXT,
  amount INTEGER NOT NULL DEFAULT 0,
  day TEXT,
  subject TEXT,
  day_role INTEGER NOT NULL DEFAULT 0,
  subject_role INTEGER NOT NULL DEFAULT 0,
  value_state TEXT NOT NULL,
  verdict TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS effects_by_identity ON effects (identity_digest, until);
CREATE INDEX IF NOT EXISTS effects_by_fate ON effects (fate, at);
CREATE INDEX IF NOT EXISTS effects_by_day ON effects (currency, day);
CREATE TABLE IF NOT EXISTS leases (
  currency TEXT NOT NULL,
  day TEXT NOT NULL,
  granted INTEGER NOT NULL,
  leased INTEGER NOT NULL,
  PRIMARY KEY (currency, day)
);
`;

/** The daily cap a claim was decided against, which an operator's approval beyond it is charged to. */
const V2 = "ALTER TABLE effects ADD COLUMN day_cap INTEGER;";

/** The user a claim counts for (`userKey`), whether this shard counts it against their caps, and whether it is destructive. */
const V3 = `
ALTER TABLE effects ADD COLUMN user TEXT;
ALTER TABLE effects ADD COLUMN user_role INTEGER NOT NULL DEFAULT 0;
ALTER TABLE effects ADD COLUMN destructive INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS effects_by_user ON effects (user, day);
`;

interface EffectRow extends Record<string, SqlStorageValue> {
  key: string;
  run_id: string;
  tool: string;
  identity: string;
  args: string;
  at: number;
  fate: string;
  generation: number;
  external_id: string | null;
  value_state: string;
  verdict: string;
}

/**
 * One of a tenant's effect shards (`<tenant>/<n>`, n < `effect_shards`): the effects of the
 * identities and subjects that hash to it, and its lease of each daily cap. Only write and
 * destructive calls reach it, once per new idempotency key; a retry under the same key gets the
 * verdict it got before. The run's ledger then commits the key and tells the shard, through its
 * outbox, how far the effect got (`apply`); a claim no ledger committed is reconciled by asking the
 * ledger (`alarm`). What it decides is decided by the pure rules of effects/shard-rules.ts: the
 * shard reads its rows for them and writes what they answer.
 */
export class EffectShard extends DurableObject<Env> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    void ctx.blockConcurrencyWhile(async () => applyMigrations(this.#sql, [V1, V2, V3]));
  }

  /**
   * Claims an effect: lists the live effects of other runs on the same identity within the window,
   * and reserves the value against the caps this shard holds (or records that it does not fit).
   * Idempotent by key. The lease is topped up first (the only await); the decision and its row are
   * then written in one synchronous step, so two runs racing on one identity cannot both pass.
   */
  async reserve(request: ShardReservation): Promise<ShardVerdict> {
    const { claim } = request;
    const known = this.#live(claim.key);
    if (known) return known;
    // Named once: a shard serves one tenant and is one of its shards (its name says which), and
    // every claim need not rewrite them.
    if (this.ctx.storage.kv.get<string>("tenant") === undefined)
      this.ctx.storage.kv.put("tenant", request.tenant);
    if (this.ctx.storage.kv.get<number>("shard") === undefined)
      this.ctx.storage.kv.put("shard", request.shard);
    const reads = this.#reads(request.replaces ?? "");
    const need = leaseNeed(request, reads);
    let toppedUp = false;
    // Two tries: a concurrent claim may have spent what the first top-up brought.
    for (let tries = 0; need !== null && tries < 2; tries++) {
      const lacking = leaseLacking(need, reads);
      if (lacking <= 0) break;
      await this.#topUp(request, need.cap, lacking);
      toppedUp = true;
    }
    // Only an await lets another claim of the key in: one that awaited nothing has read it above.
    const raced = toppedUp ? this.#live(claim.key) : null;
    if (raced) return raced;
    const decided = decideReservation(request, reads);
    // A released claim made again (its key never committed) is the claim as made now: it counts in
    // the day it was decided for (past midnight, the next one), against the caps this shard holds now.
    this.#sql.exec(
      `INSERT INTO effects (key, run_id, tool, identity_digest, identity, args, at, until, fate, generation,
         currency, amount, day, subject, day_role, subject_role, value_state, verdict, day_cap,
         user, user_role, destructive)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET fate = 'pending', generation = effects.generation + 1, at = excluded.at,
         until = excluded.until, identity_digest = excluded.identity_digest, day = excluded.day,
         day_role = excluded.day_role, subject_role = excluded.subject_role, value_state = excluded.value_state,
         verdict = excluded.verdict, day_cap = excluded.day_cap, user_role = excluded.user_role`,
      claim.key,
      claim.run_id,
      claim.tool,
      request.identity ? claim.identity_digest : null,
      JSON.stringify(claim.identity),
      JSON.stringify(claim.args),
      claim.at,
      claim.at + claim.window_ms,
      claim.value?.currency ?? null,
      claim.value?.amount ?? 0,
      claim.day,
      claim.value?.subject ?? null,
      decided.day_role ? 1 : 0,
      decided.subject_role ? 1 : 0,
      decided.value_state,
      JSON.stringify(decided.verdict),
      decided.day_cap,
      claim.user ? userKey(claim.user) : null,
      decided.user_role ? 1 : 0,
      claim.destructive === true ? 1 : 0,
    );
    const alarm = alarmForClaim(claim.at, Date.now(), await this.ctx.storage.getAlarm());
    if (alarm !== null) await this.ctx.storage.setAlarm(alarm);
    return decided.verdict;
  }

  /**
   * Reconciles one pending claim now, as the alarm would: its run's ledger asks this when the call
   * that made the claim ended without committing its key (an operator's edit refused, or lost to
   * another decision), so the claim neither shows as an earlier effect nor holds value meanwhile.
   */
  async reconcile(key: string): Promise<void> {
    const tenant = this.ctx.storage.kv.get<string>("tenant");
    const row = this.#sql
      .exec<EffectRow>("SELECT * FROM effects WHERE key = ? AND fate = 'pending'", key)
      .toArray()[0];
    if (tenant !== undefined && row) await this.#reconcileRow(tenant, row);
  }

  /**
   * How far a committed key's effect got (`applyUpdate`). A value sent beyond the daily cap by an
   * operator's approval is then charged to the cap's pool; should the pool be out of reach, the
   * report fails and is delivered again.
   */
  async apply(update: EffectUpdate): Promise<void> {
    const row = this.#sql
      .exec<{
        fate: EffectFate;
        value_state: ValueState;
        currency: string | null;
        day: string;
        day_cap: number | null;
      }>("SELECT fate, value_state, currency, day, day_cap FROM effects WHERE key = ?", update.key)
      .toArray()[0];
    if (!row) return;
    const applied = applyUpdate(row, update);
    this.#sql.exec(
      "UPDATE effects SET fate = ?, external_id = COALESCE(?, external_id), value_state = ? WHERE key = ?",
      applied.fate,
      update.external_id,
      applied.value_state,
      update.key,
    );
    if (applied.charge && row.currency !== null && row.day_cap !== null)
      await this.#chargeOverrides(row.currency, row.day, row.day_cap);
  }

  /** This shard's share of a currency's day: what its claims used, reserved and moved beyond a cap. */
  usage(currency: string, day: string): Omit<ValueUsage, "per_day"> {
    const totals = this.#totals("day_role = 1 AND currency = ? AND day = ?", "", [currency, day]);
    return { currency, day, ...totals, overrides: this.#daySum("override", currency, day, "") };
  }

  /**
   * Reconciliation: asks the ledger of each claim still pending after `RECONCILE_AFTER_MS` what
   * became of its key, and applies the answer unless the claim was made again meanwhile. Then prunes
   * what no window or day needs any more.
   */
  override async alarm(): Promise<void> {
    const tenant = this.ctx.storage.kv.get<string>("tenant");
    const now = Date.now();
    const due = this.#sql
      .exec<EffectRow>("SELECT * FROM effects WHERE fate = 'pending' AND at <= ?", reconcileDue(now))
      .toArray();
    for (const row of tenant ? due : []) {
      try {
        await this.#reconcileRow(tenant ?? "", row);
      } catch (error) {
        console.error(`reconciling effect ${row.key} failed; the alarm asks again`, error);
      }
    }
    const prune = pruneBefore(now);
    this.#sql.exec(
      "DELETE FROM effects WHERE fate != 'pending' AND until < ? AND at < ?",
      prune.until,
      prune.at,
    );
    this.#sql.exec("DELETE FROM leases WHERE day < ?", prune.leaseDay);
    const pending = this.#sql
      .exec<{ at: number | null }>("SELECT MIN(at) AS at FROM effects WHERE fate = 'pending'")
      .one().at;
    const oldest = this.#sql.exec<{ at: number | null }>("SELECT MIN(at) AS at FROM effects").one().at;
    const next = nextAlarm(pending, oldest, Date.now());
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }

  /**
   * Asks a pending claim's ledger what became of its key, and applies the answer unless the claim
   * was made again meanwhile (its generation moved) or its call is still deciding.
   */
  async #reconcileRow(tenant: string, row: EffectRow): Promise<void> {
    const fate = reconciledFate(await ledgerFor(this.env, tenant, row.run_id).effectFate(tenant, row.key));
    if (fate === null) return;
    this.#sql.exec(
      "UPDATE effects SET fate = ? WHERE key = ? AND generation = ? AND fate = 'pending'",
      fate,
      row.key,
      row.generation,
    );
  }

  /** The verdict of a key claimed before and not released: a retry of the same call. */
  #live(key: string): ShardVerdict | null {
    const row = this.#sql
      .exec<{ verdict: string }>("SELECT verdict FROM effects WHERE key = ? AND fate != 'released'", key)
      .toArray()[0];
    return row ? (JSON.parse(row.verdict) as ShardVerdict) : null;
  }

  /** What the rules read of this shard's live claims, leaving out `except`'s (a replaced claim). */
  #reads(except: string): ShardReads {
    return {
      subjectTotals: (currency, day, subject) =>
        this.#totals("subject_role = 1 AND currency = ? AND day = ? AND subject = ?", except, [
          currency,
          day,
          subject,
        ]),
      userTotals: (currency, day, user) =>
        this.#totals("user_role = 1 AND currency = ? AND day = ? AND user = ?", except, [
          currency,
          day,
          user,
        ]),
      userDestructive: (day, user) =>
        this.#totals("user_role = 1 AND destructive = 1 AND day = ? AND user = ?", except, [day, user], "1"),
      dayHeld: (currency, day) => this.#dayHeld(currency, day, except),
      dayTotals: (currency, day) =>
        this.#totals("day_role = 1 AND currency = ? AND day = ?", except, [currency, day]),
      lease: (currency, day) => this.#lease(currency, day),
      earlier: (claim) => this.#earlier(claim),
    };
  }

  #earlier(claim: EffectClaim): EarlierEffect[] {
    return this.#sql
      .exec<EffectRow>(
        `SELECT * FROM effects WHERE identity_digest = ? AND until > ? AND run_id != ? AND fate != 'released'
         ORDER BY at LIMIT 10`,
        claim.identity_digest,
        claim.at,
        claim.run_id,
      )
      .toArray()
      .map((row) => ({
        run_id: row.run_id,
        tool: row.tool,
        at: new Date(row.at).toISOString(),
        args: JSON.parse(row.args) as Record<string, unknown>,
        identity: JSON.parse(row.identity) as Record<string, unknown>,
        outcome: earlierOutcome(row.fate as Exclude<EffectFate, "released">),
        external_id: row.external_id,
      }));
  }

  /**
   * Used and reserved value of the live rows matching `where`, but `except`'s: used is confirmed or
   * overridden (`ValueTotals`), reserved is counted and not yet confirmed. Summed here rather than
   * row by row in the rules: a day may hold many claims.
   */
  #totals(
    where: string,
    except: string,
    params: SqlStorageValue[],
    /** `1`: count the rows (a user's destructive calls) rather than sum their value. */
    measure: "amount" | "1" = "amount",
  ): ValueTotals {
    const row = this.#sql
      .exec<{ used: number; reserved: number }>(
        `SELECT
           COALESCE(SUM(CASE WHEN fate = 'confirmed' OR value_state = 'override' THEN ${measure} ELSE 0 END), 0) AS used,
           COALESCE(SUM(CASE WHEN fate != 'confirmed' AND value_state = 'counted' THEN ${measure} ELSE 0 END), 0) AS reserved
         FROM effects WHERE ${where} AND fate != 'released' AND value_state IN ('counted', 'override') AND key != ?`,
        ...params,
        except,
      )
      .one();
    return { used: row.used, reserved: row.reserved };
  }

  /**
   * What this shard's claims hold of its lease of a day, but `except`'s: everything counted and
   * live, and what operators approved beyond a cap, which counts as used.
   */
  #dayHeld(currency: string, day: string, except: string): number {
    return this.#daySum("counted", currency, day, except) + this.#daySum("override", currency, day, except);
  }

  /** The live value of this shard's claims on a day's cap in one value state, but `except`'s. */
  #daySum(state: "counted" | "override", currency: string, day: string, except: string): number {
    return this.#sql
      .exec<{ total: number }>(
        `SELECT COALESCE(SUM(amount), 0) AS total FROM effects
         WHERE day_role = 1 AND currency = ? AND day = ? AND value_state = ? AND fate != 'released' AND key != ?`,
        currency,
        day,
        state,
        except,
      )
      .one().total;
  }

  #lease(currency: string, day: string): LeaseHeld {
    return (
      this.#sql
        .exec<{ granted: number; leased: number }>(
          "SELECT granted, leased FROM leases WHERE currency = ? AND day = ?",
          currency,
          day,
        )
        .toArray()[0] ?? { granted: 0, leased: 0 }
    );
  }

  async #topUp(request: ShardReservation, cap: number, lacking: number): Promise<void> {
    const { claim, tenant } = request;
    const currency = claim.value?.currency ?? "";
    const held = this.#lease(currency, claim.day).granted;
    const answer = await this.#pool(tenant, currency, claim.day).lease(request.shard, {
      ...leaseAsk(held, lacking, cap, request.shards),
      cap,
      shards: request.shards,
      day: claim.day,
    });
    this.#keepLease(currency, claim.day, answer);
  }

  /**
   * Charges what this shard holds of a day past its part to the pool's room (`overridesToCover`).
   * Parts already leased to other shards stay theirs; what the room cannot cover holds this shard's
   * next claims until its own claims fall back within its part.
   */
  async #chargeOverrides(currency: string, day: string, cap: number): Promise<void> {
    const tenant = this.ctx.storage.kv.get<string>("tenant");
    const shard = this.ctx.storage.kv.get<number>("shard");
    const total = overridesToCover(this.#dayHeld(currency, day, ""), this.#lease(currency, day));
    if (tenant === undefined || shard === undefined || total === null) return;
    const answer = await this.#pool(tenant, currency, day).cover(shard, { total, cap, day });
    this.#keepLease(currency, day, answer);
  }

  #pool(tenant: string, currency: string, day: string): DurableObjectStub<CapPool> {
    return tenantObject(this.env, this.env.CAP_POOL, tenant, `${tenant}/${currency}/${day}`);
  }

  /** A pool's answer, kept: a part only grows, whatever order answers arrive in. */
  #keepLease(currency: string, day: string, answer: LeaseHeld): void {
    this.#sql.exec(
      `INSERT INTO leases (currency, day, granted, leased) VALUES (?, ?, ?, ?)
       ON CONFLICT (currency, day) DO UPDATE SET granted = MAX(leases.granted, excluded.granted), leased = excluded.leased`,
      currency,
      day,
      answer.granted,
      answer.leased,
    );
  }
}
