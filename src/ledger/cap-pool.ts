import { DurableObject } from "cloudflare:workers";
import { applyMigrations } from "../core/sql-migrations";
import type { Env } from "../env";

const V1 = `
CREATE TABLE IF NOT EXISTS leases (
  shard INTEGER PRIMARY KEY,
  granted INTEGER NOT NULL
);
`;

/** A day's pool is kept two days past its day, then deleted by its alarm. */
const KEEP_MS = 3 * 24 * 60 * 60 * 1000;

/** What a shard holds of a day's cap after asking, and what all shards hold together. */
export interface LeaseAnswer {
  granted: number;
  leased: number;
}

/**
 * One per tenant, currency and UTC day: the daily value cap, leased in parts to the tenant's
 * effect shards (`EffectShard`), which reserve against their part without coming back here. The sum
 * of the parts never exceeds the cap, so the value reserved across shards never does either.
 * A part is never taken back: one a shard holds unspent is the accuracy the design gives up for
 * throughput (README "Value caps").
 */
export class CapPool extends DurableObject<Env> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    void ctx.blockConcurrencyWhile(async () => applyMigrations(this.#sql, [V1]));
  }

  /**
   * Raises a shard's part towards `want` (the total it wants to hold, not an increment, so a
   * shard that asks again after losing an answer gets nothing twice), as far as the cap allows.
   * Synchronous up to the alarm, so two shards can never both take the cap's last unit.
   */
  async lease(shard: number, want: number, cap: number, day: string): Promise<LeaseAnswer> {
    const held =
      this.#sql.exec<{ granted: number }>("SELECT granted FROM leases WHERE shard = ?", shard).toArray()[0]
        ?.granted ?? 0;
    const leased = this.#sql
      .exec<{ total: number }>("SELECT COALESCE(SUM(granted), 0) AS total FROM leases")
      .one().total;
    const grant = Math.max(0, Math.min(want - held, cap - leased));
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
