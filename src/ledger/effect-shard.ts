import { DurableObject } from "cloudflare:workers";
import { tenantObject } from "../config/placement";
import { applyMigrations } from "../core/sql-migrations";
import { capLimit, leaseWant, type ValueTotals } from "../effects/caps";
import type { EffectClaim } from "../effects/claim";
import { advanceFate, type EffectFate, earlierOutcome } from "../effects/fate";
import type { Env } from "../env";
import type { CapLimit, EarlierEffect, ValueUsage } from "../wire/effects";
import type { CapPool, LeaseAnswer } from "./cap-pool";
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

/**
 * How long a claim whose key no ledger has committed waits before the shard asks the run's ledger
 * what became of it. The question, not the wait, decides: a claim is released only when the ledger
 * answers that the key was never committed and no call is deciding it.
 */
export const RECONCILE_AFTER_MS = 5_000;
/** Rows are kept a day past their window and their day, then pruned. */
const KEEP_MS = 24 * 60 * 60 * 1000;

/** What one shard is asked to hold of a claim: its identity, its value against one or both caps. */
export interface ShardReservation {
  tenant: string;
  shard: number;
  shards: number;
  claim: EffectClaim;
  identity: boolean;
  /** The tenant's daily cap for the claim's currency, when this shard reserves against its lease of it. */
  per_day: number | null;
  /** The per-subject daily cap, when this shard holds the claim's subject. */
  per_subject_day: number | null;
  /**
   * The key of the same run's claim this one replaces (an operator edited its call before approving
   * it): its value is not counted against this claim, since only one of the two can ever be sent.
   * Its row is released when the edit's commit reports it.
   */
  replaces?: string | null;
}

export interface ShardVerdict {
  earlier: EarlierEffect[];
  over: CapLimit | null;
}

/** A committed key's fate, as its run's outbox reports it. */
export interface EffectUpdate {
  key: string;
  fate: EffectFate;
  external_id: string | null;
  /** Sent although its value did not fit: an operator approved it beyond the cap. */
  override: boolean;
}

type ValueState = "none" | "counted" | "over" | "override";

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
 * ledger (`alarm`).
 */
export class EffectShard extends DurableObject<Env> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    void ctx.blockConcurrencyWhile(async () => applyMigrations(this.#sql, [V1, V2]));
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
    const day = request.per_day !== null && claim.value ? request.per_day : null;
    const except = request.replaces ?? "";
    let toppedUp = false;
    // A claim its subject's cap already holds waits for a human whatever this shard leases: a part
    // taken for it, never given back, would only keep the day's room from calls that fit.
    const heldBySubject = this.#subjectOver(request, except) !== null;
    // Two tries: a concurrent claim may have spent what the first top-up brought.
    for (let tries = 0; day !== null && claim.value && !heldBySubject && tries < 2; tries++) {
      const lacking =
        this.#dayHeld(claim.value.currency, claim.day, except) +
        claim.value.amount -
        this.#lease(claim.value.currency, claim.day).granted;
      if (lacking <= 0) break;
      await this.#topUp(request, day, lacking);
      toppedUp = true;
    }
    // Only an await lets another claim of the key in: one that awaited nothing has read it above.
    const raced = toppedUp ? this.#live(claim.key) : null;
    if (raced) return raced;
    const verdict: ShardVerdict = {
      earlier: request.identity && !claim.repeatable ? this.#earlier(claim) : [],
      over: this.#subjectOver(request, except) ?? (day !== null ? this.#dayOver(claim, day, except) : null),
    };
    const valued = claim.value !== null && (day !== null || request.per_subject_day !== null);
    const valueState: ValueState = !valued ? "none" : verdict.over ? "over" : "counted";
    // A released claim made again (its key never committed) is the claim as made now: it counts in
    // the day it was decided for (past midnight, the next one), against the caps this shard holds now.
    this.#sql.exec(
      `INSERT INTO effects (key, run_id, tool, identity_digest, identity, args, at, until, fate, generation,
         currency, amount, day, subject, day_role, subject_role, value_state, verdict, day_cap)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET fate = 'pending', generation = effects.generation + 1, at = excluded.at,
         until = excluded.until, identity_digest = excluded.identity_digest, day = excluded.day,
         day_role = excluded.day_role, subject_role = excluded.subject_role, value_state = excluded.value_state,
         verdict = excluded.verdict, day_cap = excluded.day_cap`,
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
      day !== null ? 1 : 0,
      request.per_subject_day !== null ? 1 : 0,
      valueState,
      JSON.stringify(verdict),
      day,
    );
    await this.#ringForClaim(claim.at);
    return verdict;
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
   * How far a committed key's effect got. Applied only forwards, so a late or repeated report
   * changes nothing. A value sent beyond the daily cap by an operator's approval is then charged to
   * the cap's pool; should the pool be out of reach, the report fails and is delivered again.
   */
  async apply(update: EffectUpdate): Promise<void> {
    const row = this.#sql
      .exec<{
        fate: string;
        value_state: string;
        currency: string | null;
        day: string;
        day_cap: number | null;
      }>("SELECT fate, value_state, currency, day, day_cap FROM effects WHERE key = ?", update.key)
      .toArray()[0];
    if (!row) return;
    const fate = advanceFate(row.fate as EffectFate, update.fate);
    const valueState =
      update.override && row.value_state === "over" && (fate === "sent" || fate === "confirmed")
        ? "override"
        : row.value_state;
    this.#sql.exec(
      "UPDATE effects SET fate = ?, external_id = COALESCE(?, external_id), value_state = ? WHERE key = ?",
      fate,
      update.external_id,
      valueState,
      update.key,
    );
    if (valueState === "override" && row.currency !== null && row.day_cap !== null)
      await this.#chargeOverrides(row.currency, row.day, row.day_cap);
  }

  /** This shard's share of a currency's day: what its claims used, reserved and moved beyond a cap. */
  usage(currency: string, day: string): Omit<ValueUsage, "per_day"> {
    const totals = this.#totals("day_role = 1 AND currency = ? AND day = ?", "", currency, day);
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
      .exec<EffectRow>("SELECT * FROM effects WHERE fate = 'pending' AND at <= ?", now - RECONCILE_AFTER_MS)
      .toArray();
    for (const row of tenant ? due : []) {
      try {
        await this.#reconcileRow(tenant ?? "", row);
      } catch (error) {
        console.error(`reconciling effect ${row.key} failed; the alarm asks again`, error);
      }
    }
    this.#sql.exec(
      "DELETE FROM effects WHERE fate != 'pending' AND until < ? AND at < ?",
      now - KEEP_MS,
      now - 2 * KEEP_MS,
    );
    this.#sql.exec(
      "DELETE FROM leases WHERE day < ?",
      new Date(now - 2 * KEEP_MS).toISOString().slice(0, 10),
    );
    await this.#scheduleAlarm();
  }

  /**
   * Asks a pending claim's ledger what became of its key, and applies the answer unless the claim
   * was made again meanwhile (its generation moved) or its call is still deciding.
   */
  async #reconcileRow(tenant: string, row: EffectRow): Promise<void> {
    const fate = await ledgerFor(this.env, tenant, row.run_id).effectFate(tenant, row.key);
    if (fate === "deciding") return;
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

  /** Used (confirmed or overridden) and reserved value of the live rows matching `where`, but `except`'s. */
  #totals(where: string, except: string, ...params: SqlStorageValue[]): ValueTotals {
    const row = this.#sql
      .exec<{ used: number; reserved: number }>(
        `SELECT
           COALESCE(SUM(CASE WHEN fate = 'confirmed' OR value_state = 'override' THEN amount ELSE 0 END), 0) AS used,
           COALESCE(SUM(CASE WHEN fate != 'confirmed' AND value_state = 'counted' THEN amount ELSE 0 END), 0) AS reserved
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

  #lease(currency: string, day: string): LeaseAnswer {
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
      want: held + leaseWant(lacking, cap, request.shards),
      need: held + lacking,
      cap,
      shards: request.shards,
      day: claim.day,
    });
    this.#keepLease(currency, claim.day, answer);
  }

  /**
   * Overrides count as used across shards: what this shard holds of a day past its part (value an
   * operator sent beyond the cap) is taken from the room the pool has left, so no other shard leases
   * it again. Parts already leased to other shards stay theirs; what the room cannot cover holds this
   * shard's next claims until its own claims fall back within its part.
   */
  async #chargeOverrides(currency: string, day: string, cap: number): Promise<void> {
    const tenant = this.ctx.storage.kv.get<string>("tenant");
    const shard = this.ctx.storage.kv.get<number>("shard");
    const held = this.#dayHeld(currency, day, "");
    if (tenant === undefined || shard === undefined || held <= this.#lease(currency, day).granted) return;
    const answer = await this.#pool(tenant, currency, day).cover(shard, { total: held, cap, day });
    this.#keepLease(currency, day, answer);
  }

  #pool(tenant: string, currency: string, day: string): DurableObjectStub<CapPool> {
    return tenantObject(this.env, this.env.CAP_POOL, tenant, `${tenant}/${currency}/${day}`);
  }

  /** A pool's answer, kept: a part only grows, whatever order answers arrive in. */
  #keepLease(currency: string, day: string, answer: LeaseAnswer): void {
    this.#sql.exec(
      `INSERT INTO leases (currency, day, granted, leased) VALUES (?, ?, ?, ?)
       ON CONFLICT (currency, day) DO UPDATE SET granted = MAX(leases.granted, excluded.granted), leased = excluded.leased`,
      currency,
      day,
      answer.granted,
      answer.leased,
    );
  }

  #subjectOver(request: ShardReservation, except: string): CapLimit | null {
    const { claim, per_subject_day: cap } = request;
    if (cap === null || !claim.value || claim.value.subject === null) return null;
    const totals = this.#totals(
      "subject_role = 1 AND currency = ? AND day = ? AND subject = ?",
      except,
      claim.value.currency,
      claim.day,
      claim.value.subject,
    );
    return capLimit("per_subject_day", cap, totals, claim.value);
  }

  /**
   * Whether the claim fits this shard's lease of the day. Told as the day's cap: what this shard
   * used and reserved, the other shards' leases counted as used (this shard cannot see inside them).
   */
  #dayOver(claim: EffectClaim, cap: number, except: string): CapLimit | null {
    if (!claim.value) return null;
    const lease = this.#lease(claim.value.currency, claim.day);
    if (this.#dayHeld(claim.value.currency, claim.day, except) + claim.value.amount <= lease.granted)
      return null;
    const own = this.#totals(
      "day_role = 1 AND currency = ? AND day = ?",
      except,
      claim.value.currency,
      claim.day,
    );
    const totals = { used: own.used + Math.max(0, lease.leased - lease.granted), reserved: own.reserved };
    return (
      capLimit("per_day", cap, totals, claim.value) ?? {
        cap: "per_day",
        currency: claim.value.currency,
        subject: null,
        limit: cap,
        ...totals,
        remaining: Math.max(0, cap - totals.used - totals.reserved),
        amount: claim.value.amount,
      }
    );
  }

  /**
   * A new claim may be orphaned (its call refused or abandoned before its key was committed), so the
   * alarm is moved to reconcile it RECONCILE_AFTER_MS after it was made, if it would ring later: an
   * alarm set for a prune, a day or two ahead, would leave the claim holding its value until then.
   */
  async #ringForClaim(at: number): Promise<void> {
    const due = Math.max(at + RECONCILE_AFTER_MS, Date.now() + 1_000);
    const set = await this.ctx.storage.getAlarm();
    if (set === null || set > due) await this.ctx.storage.setAlarm(due);
  }

  /** Rings for the first pending claim to reconcile, else for the next prune. */
  async #scheduleAlarm(): Promise<void> {
    const pending = this.#sql
      .exec<{ at: number | null }>("SELECT MIN(at) AS at FROM effects WHERE fate = 'pending'")
      .one().at;
    const oldest = this.#sql.exec<{ at: number | null }>("SELECT MIN(at) AS at FROM effects").one().at;
    // A claim whose call is still deciding is asked about again a moment later, not at once.
    if (pending !== null)
      await this.ctx.storage.setAlarm(Math.max(pending + RECONCILE_AFTER_MS, Date.now() + 1_000));
    else if (oldest !== null) await this.ctx.storage.setAlarm(oldest + 2 * KEEP_MS);
  }
}
