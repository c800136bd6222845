import type { ChainHead } from "../audit/chain";
import type { AuditQuery } from "../audit/filters";
import { canonicalJson } from "../core/canonical-json";
import type { Receipt } from "../wire/audit";

/**
 * The audit log's tables in its Durable Object's SQLite database: the receipts (each as the
 * canonical JSON it was signed in, beside the columns its searches use), who took part in each,
 * and the chain's head, which outlives the receipts retention deletes, so the chain goes on from
 * the last receipt written whatever is left of it.
 */
export const AUDIT_V1 = `
CREATE TABLE IF NOT EXISTS receipts (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  at INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL,
  run_id TEXT NOT NULL,
  tool TEXT,
  receipt TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS receipts_by_run ON receipts (run_id, seq);
CREATE INDEX IF NOT EXISTS receipts_by_tool ON receipts (tool, seq);
CREATE INDEX IF NOT EXISTS receipts_by_at ON receipts (at);
CREATE INDEX IF NOT EXISTS receipts_by_recorded ON receipts (recorded_at);
CREATE TABLE IF NOT EXISTS receipt_operators (
  operator TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (operator, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chain (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  tenant TEXT NOT NULL,
  seq INTEGER NOT NULL,
  hash TEXT NOT NULL,
  pushed_seq INTEGER NOT NULL DEFAULT 0,
  batch_first INTEGER,
  batch_last INTEGER,
  push_attempts INTEGER NOT NULL DEFAULT 0,
  push_next_at INTEGER
);
`;

interface ChainRow extends Record<string, SqlStorageValue> {
  tenant: string;
  seq: number;
  hash: string;
  pushed_seq: number;
  batch_first: number | null;
  batch_last: number | null;
  push_attempts: number;
  push_next_at: number | null;
}

/** A batch of receipts on its way to the tenant's endpoint: the same range, under the same id, until acknowledged. */
export interface PushBatch {
  first: number;
  last: number;
  attempts: number;
}

/** Everyone a receipt names as acting: the operator it was decided or executed by, its approvers, its editor. */
function operatorsOf(receipt: Receipt): string[] {
  const named = [
    receipt.actor.kind === "operator" ? receipt.actor.id : null,
    receipt.approval?.decided_by ?? null,
    receipt.approval?.edit?.by ?? null,
    ...(receipt.approval?.approvers.map((approver) => approver.operator) ?? []),
  ];
  return [
    ...new Set(named.filter((id): id is string => typeof id === "string" && id.startsWith("operator:"))),
  ];
}

export class AuditStore {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** The tenant the log belongs to and its head; null for a log nothing was written to yet. */
  chain(): (ChainHead & { tenant: string }) | null {
    const row = this.#sql.exec<ChainRow>("SELECT tenant, seq, hash FROM chain WHERE id = 1").toArray()[0];
    return row ? { tenant: row.tenant, seq: row.seq, hash: row.hash } : null;
  }

  /** Which of these receipt ids the log holds already: a delivery repeated after a lost answer. */
  known(ids: readonly string[]): Set<string> {
    const known = new Set<string>();
    for (const id of ids) {
      if (this.#sql.exec("SELECT 1 FROM receipts WHERE id = ?", id).toArray().length > 0) known.add(id);
    }
    return known;
  }

  /** Appends sealed receipts and moves the head to the last; inside one `transactionSync`. */
  append(tenant: string, receipts: readonly Receipt[]): void {
    for (const receipt of receipts) {
      this.#sql.exec(
        "INSERT INTO receipts (seq, id, at, recorded_at, run_id, tool, receipt) VALUES (?, ?, ?, ?, ?, ?, ?)",
        receipt.seq,
        receipt.id,
        Date.parse(receipt.at),
        Date.parse(receipt.recorded_at),
        receipt.run_id,
        receipt.tool?.name ?? null,
        canonicalJson(receipt),
      );
      for (const operator of operatorsOf(receipt)) {
        this.#sql.exec("INSERT INTO receipt_operators (operator, seq) VALUES (?, ?)", operator, receipt.seq);
      }
    }
    const last = receipts.at(-1);
    if (!last) return;
    this.#sql.exec(
      `INSERT INTO chain (id, tenant, seq, hash) VALUES (1, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`,
      tenant,
      last.seq,
      last.hash,
    );
  }

  /** Receipts after `query.after` that match it, oldest first, each as the log wrote it; one past the limit. */
  page(query: AuditQuery): Array<{ seq: number; receipt: string }> {
    const where = ["receipts.seq > ?"];
    const bindings: SqlStorageValue[] = [query.after];
    if (query.since !== null) {
      where.push("receipts.at >= ?");
      bindings.push(query.since);
    }
    if (query.until !== null) {
      where.push("receipts.at < ?");
      bindings.push(query.until);
    }
    if (query.tool !== null) {
      where.push("receipts.tool = ?");
      bindings.push(query.tool);
    }
    if (query.run_id !== null) {
      where.push("receipts.run_id = ?");
      bindings.push(query.run_id);
    }
    if (query.operator !== null) {
      where.push("receipts.seq IN (SELECT seq FROM receipt_operators WHERE operator = ?)");
      bindings.push(query.operator);
    }
    return this.#sql
      .exec<{ seq: number; receipt: string }>(
        `SELECT seq, receipt FROM receipts WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ?`,
        ...bindings,
        query.limit + 1,
      )
      .toArray();
  }

  /** One receipt by its place in the chain, as the log wrote it; null when it is not kept. */
  one(seq: number): string | null {
    return (
      this.#sql.exec<{ receipt: string }>("SELECT receipt FROM receipts WHERE seq = ?", seq).toArray()[0]
        ?.receipt ?? null
    );
  }

  /** The receipts from `first` to `last` that are still kept, in order. */
  range(first: number, last: number): string[] {
    return this.#sql
      .exec<{ receipt: string }>(
        "SELECT receipt FROM receipts WHERE seq BETWEEN ? AND ? ORDER BY seq",
        first,
        last,
      )
      .toArray()
      .map((row) => row.receipt);
  }

  /** Deletes every receipt written before `before` (epoch ms); how many went. */
  deleteRecordedBefore(before: number): number {
    this.#sql.exec(
      "DELETE FROM receipt_operators WHERE seq IN (SELECT seq FROM receipts WHERE recorded_at < ?)",
      before,
    );
    return this.#sql.exec("DELETE FROM receipts WHERE recorded_at < ?", before).rowsWritten;
  }

  /** When the oldest receipt kept was written, or null when none is. */
  oldestRecordedAt(): number | null {
    return this.#sql.exec<{ oldest: number | null }>("SELECT MIN(recorded_at) AS oldest FROM receipts").one()
      .oldest;
  }

  /**
   * The batch to push next: the one on its way (the same range again), else up to `max` receipts
   * after the last acknowledged, recorded as on their way. Null when everything was pushed.
   */
  nextBatch(max: number): PushBatch | null {
    const row = this.#sql.exec<ChainRow>("SELECT * FROM chain WHERE id = 1").toArray()[0];
    if (!row) return null;
    if (row.batch_first !== null && row.batch_last !== null) {
      return { first: row.batch_first, last: row.batch_last, attempts: row.push_attempts };
    }
    // Receipts retention deleted before they were pushed are not waited for.
    const kept = this.#sql
      .exec<{ first: number | null }>("SELECT MIN(seq) AS first FROM receipts WHERE seq > ?", row.pushed_seq)
      .one().first;
    if (kept === null) return null;
    const last = Math.min(row.seq, kept + max - 1);
    this.#sql.exec(
      "UPDATE chain SET batch_first = ?, batch_last = ?, push_attempts = 0 WHERE id = 1",
      kept,
      last,
    );
    return { first: kept, last, attempts: 0 };
  }

  /** The receiver acknowledged the batch: the next one starts after it. */
  pushed(batch: PushBatch): void {
    this.#sql.exec(
      `UPDATE chain SET pushed_seq = ?, batch_first = NULL, batch_last = NULL, push_attempts = 0, push_next_at = NULL
       WHERE id = 1`,
      batch.last,
    );
  }

  /** The batch was not acknowledged: it goes again at `nextAt`, the same range under the same id. */
  pushFailed(nextAt: number): void {
    this.#sql.exec(
      "UPDATE chain SET push_attempts = push_attempts + 1, push_next_at = ? WHERE id = 1",
      nextAt,
    );
  }

  /** When a failed push is due again, or null when none is waiting. */
  pushDueAt(): number | null {
    return (
      this.#sql.exec<{ at: number | null }>("SELECT push_next_at AS at FROM chain WHERE id = 1").toArray()[0]
        ?.at ?? null
    );
  }
}
