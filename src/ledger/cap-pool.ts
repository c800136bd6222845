import { DurableObject } from "cloudflare:workers";
import { applyMigrations } from "../core/sql-migrations";
import { leasePart } from "../effects/caps";
import type { LeaseHeld } from "../effects/shard-rules";
import type { Env } from "../env";

const V1 = `
CREATE TABLE IF NOT EXISTS leases (
  shard INTEGER PRIMARY KEY,
  granted INTEGER NOT NULL
);
`;

/** A day's pool is kept two days past its day, then deleted by its alarm. */
const KEEP_MS = 3 * 24 * 60 * 60 * 1000;

/** A shard's ask: the totals it wants and needs to hold, with the cap and the shard count it knows. */
export interface LeaseRequest {
  want: number;
  need: number;
  cap: number;
  shards: number;
  day: string;
}

/**
 * One per tenant, currency and UTC day: the daily value cap, leased in parts to the tenant's
 * effect shards (`EffectShard`), which reserve against their part without coming back here. The sum
 * of the parts never exceeds the cap, so the value reserved across shards never does either.
 * A part is never taken back: what a shard holds unspent is the accuracy the design gives up for
 * throughput, kept small by leasing only what is lacking near the cap (docs/guarantees.md, "Effects across runs").
 */
export class CapPool extends DurableObject<Env> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    void ctx.blockConcurrencyWhile(async () => applyMigrations(this.#sql, [V1]));
  }

  /**
   * Raises a shard's part towards `want` (the total it would like to hold: what it lacks plus a part
   * of the cap to spare), or only to `need` (what it lacks now) once granting the spare would leave
   * less than a part for each other shard: near the cap, parts go where calls are, so little of the
   * cap sits unspent in idle shards. A shard whose `need` the room left cannot meet gets nothing: its
   * call waits for a human whatever it is granted, and a part, never taken back, would only keep
   * the room from calls in other shards that fit. Totals, not increments, so a shard that asks again
   * after losing an answer gets nothing twice. Synchronous up to the alarm, so two shards can never
   * both take the cap's last unit.
   */
  async lease(shard: number, ask: LeaseRequest): Promise<LeaseHeld> {
    const { held, leased } = this.#parts(shard);
    const room = ask.cap - leased;
    const spare = (ask.shards - 1) * leasePart(ask.cap, ask.shards);
    const target = room - (ask.want - held) >= spare ? ask.want : ask.need;
    const grant = ask.need - held > room ? 0 : Math.max(0, Math.min(target - held, room));
    return this.#grant(shard, held, leased, grant, ask.day);
  }

  /**
   * Raises a shard's part towards `total`, what it holds once an operator sent a value beyond the
   * cap, as far as the room left allows: the approved value counts as used, so no other shard leases
   * that room again. Never past the cap: parts leased to other shards are theirs, and what the room
   * cannot cover stays the shard's own to hold (its next claims wait until its total falls back
   * within its part).
   */
  async cover(shard: number, ask: { total: number; cap: number; day: string }): Promise<LeaseHeld> {
    const { held, leased } = this.#parts(shard);
    const grant = Math.max(0, Math.min(ask.total - held, ask.cap - leased));
    return this.#grant(shard, held, leased, grant, ask.day);
  }

  /** What a shard holds, and what all shards hold together. */
  #parts(shard: number): { held: number; leased: number } {
    const held =
      this.#sql.exec<{ granted: number }>("SELECT granted FROM leases WHERE shard = ?", shard).toArray()[0]
        ?.granted ?? 0;
    const leased = this.#sql
      .exec<{ total: number }>("SELECT COALESCE(SUM(granted), 0) AS total FROM leases")
      .one().total;
    return { held, leased };
  }

  async #grant(shard: number, held: number, leased: number, grant: number, day: string): Promise<LeaseHeld> {
    if (grant > 0) {
      this.#sql.exec(
        "INSERT INTO leases (shard, granted) VALUES (?, ?) ON CONFLICT (shard) DO UPDATE SET granted = excluded.granted",
        shard,
        held + grant,
      );
    }
    if ((await this.ctx.storage.getAlarm()) === null) {
      await this.ctx.storage.setAlarm(Date.parse(`${day}T00:00:00Z`) + KEEP_MS);
    }
    return { granted: held + grant, leased: leased + grant };
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
