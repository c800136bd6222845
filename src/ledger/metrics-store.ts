import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { COUNTERS, type Counts } from "../metrics/events";
import type { MetricRow } from "../metrics/series";

/** How long the local store keeps a minute: the widest range the metrics route reads, and a day. */
export const RETENTION_MS = 8 * 24 * 60 * 60 * 1000;
const MINUTE_MS = 60_000;
/** Old minutes are deleted on a write at most this often: the delete is cheap, not free. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** Counts of one minute, namespace and tool, added to what the store holds. */
export interface MinuteDelta {
  /** Epoch minutes. */
  minute: number;
  namespace: string;
  tool: string;
  counts: Counts;
}

export interface StoreQuery {
  /** Epoch milliseconds, inclusive; the start of a bucket. */
  since: number;
  /** Epoch milliseconds, exclusive. */
  until: number;
  bucketMs: number;
  namespace: string | null;
}

// The column names come from the fixed COUNTERS list, never from input.
const COLUMNS = COUNTERS.map((counter) => `${counter} INTEGER NOT NULL DEFAULT 0`).join(",\n  ");
const SCHEMA = `
CREATE TABLE IF NOT EXISTS minutes (
  minute INTEGER NOT NULL,
  namespace TEXT NOT NULL,
  tool TEXT NOT NULL,
  ${COLUMNS},
  PRIMARY KEY (minute, namespace, tool)
) WITHOUT ROWID;
`;
const UPSERT = `INSERT INTO minutes (minute, namespace, tool, ${COUNTERS.join(", ")})
  VALUES (?, ?, ?, ${COUNTERS.map(() => "?").join(", ")})
  ON CONFLICT (minute, namespace, tool) DO UPDATE SET
  ${COUNTERS.map((counter) => `${counter} = ${counter} + excluded.${counter}`).join(", ")}`;
const SUMS = COUNTERS.map((counter) => `SUM(${counter}) AS ${counter}`).join(", ");

/**
 * One per tenant, where no Analytics Engine is bound (`npm start`, the tests, a deployed sandbox):
 * exact counts in minute buckets per namespace and tool, kept for eight days. Writes arrive in
 * batches from each isolate (store-sink.ts), never on an agent's answer path.
 */
export class MetricsStore extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  #prunedAt = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    void ctx.blockConcurrencyWhile(async () => {
      this.#sql.exec(SCHEMA);
      // A counter added since the table was created gets its column, zero for the minutes before.
      const present = new Set(
        this.#sql
          .exec<{ name: string }>("PRAGMA table_info(minutes)")
          .toArray()
          .map((row) => row.name),
      );
      for (const counter of COUNTERS) {
        if (!present.has(counter))
          this.#sql.exec(`ALTER TABLE minutes ADD COLUMN ${counter} INTEGER NOT NULL DEFAULT 0`);
      }
    });
  }

  record(deltas: MinuteDelta[]): void {
    for (const delta of deltas) {
      this.#sql.exec(
        UPSERT,
        delta.minute,
        delta.namespace,
        delta.tool,
        ...COUNTERS.map((counter) => delta.counts[counter]),
      );
    }
    const now = Date.now();
    if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = now;
      this.#sql.exec("DELETE FROM minutes WHERE minute < ?", Math.floor((now - RETENTION_MS) / MINUTE_MS));
    }
  }

  /** Sums per bucket and namespace, oldest first; buckets without events are absent. */
  read(query: StoreQuery): MetricRow[] {
    const step = Math.max(1, Math.round(query.bucketMs / MINUTE_MS));
    const from = Math.floor(query.since / MINUTE_MS);
    const to = Math.ceil(query.until / MINUTE_MS);
    const filter = query.namespace === null ? "" : "AND namespace = ?";
    const bindings = query.namespace === null ? [] : [query.namespace];
    const rows = this.#sql.exec<Record<string, number | string>>(
      // `%` works on integers whatever type the binding arrives as; `/` would not floor a REAL.
      `SELECT minute - minute % ? AS bucket, namespace, ${SUMS}
       FROM minutes WHERE minute >= ? AND minute < ? ${filter}
       GROUP BY bucket, namespace ORDER BY bucket, namespace`,
      step,
      from,
      to,
      ...bindings,
    );
    return rows.toArray().map((row) => ({
      t: Number(row.bucket) * MINUTE_MS,
      namespace: String(row.namespace),
      counts: Object.fromEntries(COUNTERS.map((counter) => [counter, Number(row[counter] ?? 0)])) as Counts,
    }));
  }
}
