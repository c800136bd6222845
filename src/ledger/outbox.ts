import type { ApprovalSummary } from "../approvals/model";
import { mergeSorted } from "../approvals/subjects";
import type { EffectUpdate } from "../effects/shard-rules";
import type { AuditDraft } from "../wire/audit";
import type { RunIndexEntry } from "../wire/run-summary";

/**
 * What a run's ledger owes the tenant's directory, kept in the run's own SQLite database. A message
 * is written in the same `transactionSync` as the ledger change it reports, so a crash can lose the
 * delivery but never the message: it stays here until the directory's RPC has returned, and the
 * ledger's alarm retries it, backing off, for as long as the run is retained.
 *
 * One row per topic (an approval, the run's index entry): a newer message about the same thing
 * replaces an undelivered older one, so a run whose directory is down owes it one message per
 * approval, not one per change. Each replacement raises the row's `seq`, and an acknowledgement
 * deletes only the `seq` it delivered, so a change committed while its predecessor was in flight
 * is never taken as delivered.
 */
export const OUTBOX_SCHEMA = `
CREATE TABLE IF NOT EXISTS outbox (
  topic TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  message TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL
);
`;

/**
 * A message for the tenant's shared objects: its directory (an approval, the run's entry) or the
 * effect shards that hold one of the run's claims (how far the effect got). Each applies it
 * idempotently and never lets an older one undo a newer one, so delivering twice, or late, is harmless.
 */
export type DirectoryMessage =
  | { kind: "approval"; summary: ApprovalSummary }
  /** An approval past its SLA, announced on the approval webhook (`approval.overdue`) to the escalation role. */
  | { kind: "escalation"; summary: ApprovalSummary; escalation_role: string | null }
  | { kind: "run"; entry: RunIndexEntry }
  | { kind: "effect"; shards: number[]; update: EffectUpdate }
  /** One effect decision for the tenant's audit log: a topic of its own, never replaced by a later one. */
  | { kind: "audit"; event: AuditDraft };

export interface OutboxRow {
  topic: string;
  seq: number;
  message: DirectoryMessage;
  /** Failed deliveries so far, and when the next is due. */
  attempts: number;
  next_attempt_at: number;
}

/**
 * How long a delivered message's row may wait for the next commit to delete it before it is deleted
 * on its own. A call's answer never waits for that deletion: it rides on the run's next commit, or
 * goes on its own this much later, off every answer's path.
 */
export const ACKNOWLEDGED_DELETE_AFTER_MS = 250;

/** How long after its commit a message waits for the alarm if the delivery right after the commit never returned. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 5 * 60_000;

/** The wait before retrying a message that failed `attempts` times: doubling from a second, capped at five minutes. */
export function retryDelayMs(attempts: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS);
}

function topicOf(message: DirectoryMessage): string {
  switch (message.kind) {
    case "approval":
      return `approval:${message.summary.id}`;
    case "escalation":
      return `escalation:${message.summary.id}`;
    case "run":
      return `run:${message.entry.run_id}`;
    case "effect":
      return `effect:${message.update.key}`;
    case "audit":
      return `audit:${message.event.id}`;
  }
}

/**
 * Two messages about the same topic as one. An approval's latest summary is its whole state, so it
 * replaces the older; a run's entry only adds to what the directory holds, and one written after a
 * restart knows only the tools and subjects met since, so the two entries' sets are joined.
 */
function coalesce(older: DirectoryMessage, newer: DirectoryMessage): DirectoryMessage {
  if (older.kind !== "run" || newer.kind !== "run") return newer;
  return {
    kind: "run",
    entry: {
      ...newer.entry,
      tools: mergeSorted(older.entry.tools, newer.entry.tools),
      subjects: mergeSorted(older.entry.subjects, newer.entry.subjects),
    },
  };
}

interface Row extends Record<string, SqlStorageValue> {
  topic: string;
  seq: number;
  message: string;
  attempts: number;
  next_attempt_at: number;
}

export class Outbox {
  readonly #sql: SqlStorage;
  /**
   * True once the outbox is known empty (a read found it so, a new run's was just created, or a
   * delivery acknowledged all it read), until the next message is enqueued (or `forget`): the
   * object is the outbox's only writer, and most commits owe the directory nothing, so the
   * question asked after every commit is answered from memory instead of a statement.
   */
  #empty = false;
  /**
   * When the first message is due, when memory knows it without a statement (undefined: ask
   * storage): after a message was enqueued into an empty outbox, or once a delivery acknowledged
   * every message it read and nothing was enqueued meanwhile.
   */
  #nextAt: number | null | undefined = undefined;
  /** Messages enqueued so far, and what the delivery under way read: whether it emptied the outbox. */
  #enqueued = 0;
  #reading: { enqueued: number; left: number } | null = null;
  /**
   * Rows delivered and not deleted yet: topic → the `seq` delivered. Their objects have them, so they
   * are no longer owed; the deletion waits for the next commit (`deleteAcknowledged`). A crash
   * before it leaves the rows, which are then delivered again, and applied as the no-op a repeated
   * message is.
   */
  readonly #acknowledged = new Map<string, number>();
  #deleteTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** The outbox of a run being opened: storage was just created, and it holds nothing. */
  opened(): void {
    this.#empty = true;
    this.#nextAt = null;
  }

  /** What a woken ledger's first read found: when the first message is due, null when none is owed. */
  known(nextAt: number | null): void {
    this.#empty = nextAt === null;
    this.#nextAt = nextAt;
  }

  /**
   * Adds a message; call it inside the `transactionSync` of the change it reports. `dueAt`: when the
   * alarm delivers it if no delivery does sooner; by default, the first retry after the commit.
   */
  enqueue(message: DirectoryMessage, now: number, dueAt = now + FIRST_RETRY_MS): void {
    const wasEmpty = this.#empty;
    this.#empty = false;
    this.#enqueued++;
    this.#nextAt = wasEmpty ? dueAt : undefined;
    const topic = topicOf(message);
    // An empty outbox holds no older message of the topic to merge with, and only a run's entry
    // merges with its older one (`coalesce`): any other message replaces it unread.
    const older =
      wasEmpty || message.kind !== "run"
        ? undefined
        : this.#sql.exec<Row>("SELECT message FROM outbox WHERE topic = ?", topic).toArray()[0];
    const merged = older ? coalesce(JSON.parse(older.message) as DirectoryMessage, message) : message;
    // A fresh change is worth trying at once: the backoff of a failing topic restarts from its
    // attempts so far, not from zero, when the directory still fails.
    this.#sql.exec(
      `INSERT INTO outbox (topic, seq, message, attempts, next_attempt_at) VALUES (?, 1, ?, 0, ?)
       ON CONFLICT (topic) DO UPDATE SET seq = outbox.seq + 1, message = excluded.message,
         next_attempt_at = excluded.next_attempt_at`,
      topic,
      JSON.stringify(merged),
      dueAt,
    );
  }

  /** Every undelivered message, oldest topic first. */
  undelivered(): OutboxRow[] {
    const rows = this.#sql
      .exec<Row>("SELECT topic, seq, message, attempts, next_attempt_at FROM outbox ORDER BY rowid")
      .toArray();
    const owed = rows.filter((row) => this.#acknowledged.get(row.topic) !== row.seq);
    this.#reading = { enqueued: this.#enqueued, left: owed.length };
    return owed.map((row) => ({
      topic: row.topic,
      seq: row.seq,
      message: JSON.parse(row.message) as DirectoryMessage,
      attempts: row.attempts,
      next_attempt_at: row.next_attempt_at,
    }));
  }

  /**
   * Its object has it: the row goes, unless a newer change of the topic replaced it meanwhile.
   * `later`: a call's answer waits for this delivery, so the row is deleted with the run's next
   * commit (`deleteAcknowledged`) rather than in a commit of its own the answer would wait for too.
   * An escalation's row (a webhook to someone else's server, which a crash would make send again)
   * is always deleted at once.
   */
  acknowledge(row: OutboxRow, later = false): void {
    this.#nextAt = undefined;
    let current = true;
    if (!later || row.message.kind === "escalation") {
      const deleted = this.#sql.exec("DELETE FROM outbox WHERE topic = ? AND seq = ?", row.topic, row.seq);
      current = deleted.rowsWritten === 1;
    } else {
      // A newer change of the topic, enqueued since the delivery read it, raised its seq: that one
      // is still owed (`undelivered` reads it), and the deletion below leaves it.
      this.#acknowledged.set(row.topic, row.seq);
      this.#deleteTimer ??= setTimeout(() => {
        this.#deleteTimer = null;
        try {
          this.deleteAcknowledged();
        } catch (error) {
          // The rows stay, owed again: the next delivery sends them once more, changing nothing.
          this.#acknowledged.clear();
          this.forget();
          console.error("deleting delivered outbox rows failed; they will be delivered again", error);
        }
      }, ACKNOWLEDGED_DELETE_AFTER_MS);
    }
    const reading = this.#reading;
    if (!reading || !current) return;
    reading.left--;
    // Every message the delivery read is gone and none came since: the outbox is empty.
    if (reading.left === 0 && reading.enqueued === this.#enqueued) {
      this.#empty = true;
      this.#nextAt = null;
    }
  }

  /** The delivery failed: the alarm retries it later, each failure waiting twice as long. */
  postpone(row: OutboxRow, now: number): void {
    this.#nextAt = undefined;
    const attempts =
      this.#sql
        .exec<{ attempts: number }>("SELECT attempts FROM outbox WHERE topic = ?", row.topic)
        .toArray()[0]?.attempts ?? 0;
    this.#sql.exec(
      "UPDATE outbox SET attempts = ?, next_attempt_at = ? WHERE topic = ?",
      attempts + 1,
      now + retryDelayMs(attempts + 1),
      row.topic,
    );
  }

  /**
   * Deletes the rows delivered since the last call: inside a commit's `transactionSync` (the run's
   * next commit carries them), or on their own once `ACKNOWLEDGED_DELETE_AFTER_MS` passed without one.
   */
  deleteAcknowledged(): void {
    this.#cancelDeletion();
    if (this.#acknowledged.size === 0) return;
    for (const [topic, seq] of this.#acknowledged) {
      this.#sql.exec("DELETE FROM outbox WHERE topic = ? AND seq = ?", topic, seq);
    }
    this.#acknowledged.clear();
  }

  /** The run's storage was deleted: no row is left to delete. */
  storageDeleted(): void {
    this.#cancelDeletion();
    this.#acknowledged.clear();
    this.forget();
  }

  #cancelDeletion(): void {
    if (this.#deleteTimer !== null) clearTimeout(this.#deleteTimer);
    this.#deleteTimer = null;
  }

  /**
   * Whether a receipt for the audit log is still owed: the run's storage is not deleted while one
   * is, so a receipt outlives its run's retention until the log has it.
   */
  owesAudit(): boolean {
    if (this.#empty) return false;
    return (
      this.#sql.exec("SELECT 1 FROM outbox WHERE topic >= 'audit:' AND topic < 'audit;' LIMIT 1").toArray()
        .length > 0
    );
  }

  /** When the alarm must ring to retry the first message due, or null when nothing is owed. */
  nextAttemptAt(): number | null {
    if (this.#empty) return null;
    if (this.#nextAt !== undefined) return this.#nextAt;
    const next = this.#acknowledged.size === 0 ? this.#firstDue() : this.#firstOwed();
    this.#empty = next === null;
    this.#nextAt = next;
    return next;
  }

  /** When the first row is due. */
  #firstDue(): number | null {
    const { next } = this.#sql
      .exec<{ next: number | null }>("SELECT MIN(next_attempt_at) AS next FROM outbox")
      .one();
    return next;
  }

  /** When the first row still owed is due, rows delivered and not deleted yet aside. */
  #firstOwed(): number | null {
    let first: number | null = null;
    for (const row of this.#sql.exec<Row>("SELECT topic, seq, next_attempt_at FROM outbox")) {
      if (this.#acknowledged.get(row.topic) === row.seq) continue;
      if (first === null || row.next_attempt_at < first) first = row.next_attempt_at;
    }
    return first;
  }

  /**
   * What memory knows of the outbox is dropped (a rolled-back transaction may have changed it). A
   * rolled-back deletion of delivered rows leaves them owed: delivered again, they change nothing.
   */
  forget(): void {
    this.#empty = false;
    this.#nextAt = undefined;
    this.#reading = null;
  }
}
