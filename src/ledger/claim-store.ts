import type { ValueTotals } from "../effects/caps";
import type { ClaimedValue } from "../effects/claim";
import type { EffectFate } from "../effects/fate";

/**
 * The run's side of its tenant-wide claims, one per idempotency key that claimed: the shards that
 * hold it, the value it moves, whether the value fit the caps, and the fate last reported to the
 * shards (through the outbox, in the same transaction as the change). The run's own value cap
 * (`per_run`) is checked against these rows, in the transaction that reserves the key.
 */
export const CLAIMS_SCHEMA = `
CREATE TABLE IF NOT EXISTS effect_claims (
  key TEXT PRIMARY KEY,
  shards TEXT NOT NULL,
  currency TEXT,
  amount INTEGER NOT NULL DEFAULT 0,
  over_cap INTEGER NOT NULL,
  fate TEXT NOT NULL
);
`;

export interface ClaimRow {
  key: string;
  shards: number[];
  over_cap: boolean;
  fate: EffectFate | null;
}

interface Row extends Record<string, SqlStorageValue> {
  key: string;
  shards: string;
  over_cap: number;
  fate: string;
}

/** How many keys' claims (or their absence) memory holds: a claim row is a few dozen bytes. */
const KEPT_CLAIMS = 512;

export class ClaimStore {
  readonly #sql: SqlStorage;
  /**
   * Keys' claims as storage holds them (null: none), oldest first. The object is the table's only
   * writer and each write leaves here what it wrote, so the commit that reports a key's fate reads
   * no row it already knows.
   */
  readonly #kept = new Map<string, ClaimRow | null>();
  /**
   * Whether the table holds any claim (undefined: not asked yet). Most runs claim nothing: their
   * keys' claims are known absent from one statement per instance, not one per key.
   */
  #any: boolean | undefined = undefined;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Records a key's claim; its fate is written by the commit that reports it (`setFate`). */
  insert(key: string, shards: readonly number[], value: ClaimedValue | null, overCap: boolean): void {
    const inserted = this.#sql.exec(
      `INSERT INTO effect_claims (key, shards, currency, amount, over_cap, fate) VALUES (?, ?, ?, ?, ?, '')
       ON CONFLICT (key) DO NOTHING`,
      key,
      JSON.stringify(shards),
      value?.currency ?? null,
      value?.amount ?? 0,
      overCap ? 1 : 0,
    );
    this.#any = true;
    // A claim already stored stays as it is (the insert changed nothing); a new one is kept as written.
    if (inserted.rowsWritten > 0) {
      this.#keep(key, Object.freeze({ key, shards: [...shards], over_cap: overCap, fate: null }));
    }
  }

  read(key: string): ClaimRow | null {
    const kept = this.#kept.get(key);
    if (kept !== undefined) return kept;
    this.#any ??= this.#sql.exec("SELECT 1 FROM effect_claims LIMIT 1").toArray().length > 0;
    if (!this.#any) return null;
    const row = this.#sql.exec<Row>("SELECT * FROM effect_claims WHERE key = ?", key).toArray()[0];
    const claim = row
      ? Object.freeze({
          key: row.key,
          shards: JSON.parse(row.shards) as number[],
          over_cap: row.over_cap === 1,
          fate: row.fate === "" ? null : (row.fate as EffectFate),
        })
      : null;
    this.#keep(key, claim);
    return claim;
  }

  /** Keeps a key's claim (null: none), the oldest dropped past KEPT_CLAIMS. */
  #keep(key: string, claim: ClaimRow | null): void {
    if (this.#kept.size >= KEPT_CLAIMS) this.#kept.delete(this.#kept.keys().next().value ?? key);
    this.#kept.set(key, claim);
  }

  setFate(key: string, fate: EffectFate): void {
    this.#sql.exec("UPDATE effect_claims SET fate = ? WHERE key = ?", fate, key);
    const kept = this.#kept.get(key);
    if (kept) this.#kept.set(key, Object.freeze({ ...kept, fate }));
  }

  /** What memory holds of the claims is dropped: a transaction that failed may have written some. */
  forget(): void {
    this.#kept.clear();
    this.#any = undefined;
  }

  /**
   * The run's value in a currency: used (confirmed, or sent beyond a cap by an operator's approval)
   * and reserved (held or sent, fate unknown). A claim over a cap that no operator approved counts nothing.
   * `except` leaves out the claim an edited call replaces: only one of the two can ever be sent.
   */
  runTotals(currency: string, except: string | null = null): ValueTotals {
    const row = this.#sql
      .exec<{ used: number; reserved: number }>(
        `SELECT
           COALESCE(SUM(CASE WHEN fate = 'confirmed' OR (over_cap = 1 AND fate = 'sent') THEN amount ELSE 0 END), 0) AS used,
           COALESCE(SUM(CASE WHEN over_cap = 0 AND fate IN ('', 'pending', 'held', 'sent') THEN amount ELSE 0 END), 0) AS reserved
         FROM effect_claims WHERE currency = ? AND key != ?`,
        currency,
        except ?? "",
      )
      .one();
    return { used: row.used, reserved: row.reserved };
  }
}
