import type { SideEffect } from "../catalog/define-tool";
import type { CallRecord, KeyState, StoredRequest } from "../pipeline/run-state";
import type { Envelope } from "../wire/envelope";

interface KeyRow extends Record<string, SqlStorageValue> {
  key: string;
  tool: string;
  side_effect: string | null;
  state: string;
  request: string | null;
  envelope: string | null;
  upstream_sends: number;
}

const COLUMNS = "key, tool, side_effect, state, request, envelope, upstream_sends";

function recordOf(row: KeyRow, fallback: StoredRequest | null): CallRecord | null {
  const request = row.request === null ? fallback : (JSON.parse(row.request) as StoredRequest);
  if (!request) return null;
  return {
    key: row.key,
    tool: row.tool,
    side_effect: (row.side_effect ?? "write") as SideEffect,
    state: row.state === "reserved" ? "sending" : (row.state as KeyState),
    request,
    envelope: row.envelope === null ? null : (JSON.parse(row.envelope) as Envelope),
    sends: row.upstream_sends,
  };
}

/** Deeply frozen: a record shared by the reads of one key is never changed by one of its readers. */
function frozen<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) frozen(inner);
    Object.freeze(value);
  }
  return value;
}

/** How many keys' last reads are kept in memory: the keys of the calls in flight, and a few more. */
const RECENT_KEYS = 32;

/** The run's call records, one per idempotency key, in the same database and transactions as its trace. */
export class KeyStore {
  readonly #sql: SqlStorage;
  /**
   * The latest keys read, as storage holds them (undefined: no row). The object is the table's only
   * writer and every write drops its key here, so an entry is what a read would find; a call reads
   * its key at several stages (intake, its tool limit, the tenant-wide claim, admission), and a
   * replay's stored envelope is parsed once, not at each.
   */
  readonly #recent = new Map<string, { row: KeyRow | undefined; record: CallRecord | null }>();

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /**
   * The record of a key. A record written before requests were stored has none: it takes the
   * request the current call would send (`fallback`), which is what was sent for it then.
   */
  read(key: string, fallback: StoredRequest | null): CallRecord | null {
    let entry = this.#recent.get(key);
    if (!entry) {
      const row = this.#sql
        .exec<KeyRow>(`SELECT ${COLUMNS} FROM idempotency WHERE key = ?`, key)
        .toArray()[0];
      entry = { row, record: row ? frozen(recordOf(row, null)) : null };
      if (this.#recent.size >= RECENT_KEYS) this.#recent.delete(this.#recent.keys().next().value ?? key);
      this.#recent.set(key, entry);
    }
    const { row, record } = entry;
    if (!row) return null;
    // A record stored without its request takes this call's (`fallback`), so it is built anew.
    return row.request === null ? recordOf(row, fallback) : record;
  }

  /** What memory holds of the keys is dropped: a transaction that failed may have written some. */
  forget(): void {
    this.#recent.clear();
  }

  /** The keys whose request was leaving when last recorded: in flight, or cut off by a restart. */
  readSending(): CallRecord[] {
    return this.#sql
      .exec<KeyRow>(`SELECT ${COLUMNS} FROM idempotency WHERE state IN ('sending', 'reserved')`)
      .toArray()
      .flatMap((row) => recordOf(row, null) ?? []);
  }

  /** A key that waits for a human: its request is fixed now, nothing is sent. */
  hold(record: CallRecord, now: number): void {
    this.#recent.delete(record.key);
    this.#sql.exec(
      `INSERT INTO idempotency (key, tool, side_effect, state, request, envelope, upstream_sends, created_at, updated_at)
       VALUES (?, ?, ?, 'held', ?, NULL, 0, ?, ?)`,
      record.key,
      record.tool,
      record.side_effect,
      JSON.stringify(record.request),
      now,
      now,
    );
  }

  /**
   * Removes a held key that never left: an operator's edit moved its approval to the edited call's
   * key. Only a held key is removed; one whose request may have left is never forgotten.
   */
  drop(key: string): void {
    this.#recent.delete(key);
    this.#sql.exec("DELETE FROM idempotency WHERE key = ? AND state = 'held'", key);
  }

  /**
   * Records that the key's request is about to leave: first send, an approval's, or a resend of a
   * key in doubt. The request is written only when the key is new: a stored one is never replaced.
   */
  send(key: string, tool: string, sideEffect: SideEffect, request: StoredRequest, now: number): void {
    this.#recent.delete(key);
    this.#sql.exec(
      `INSERT INTO idempotency (key, tool, side_effect, state, request, envelope, upstream_sends, created_at, updated_at)
       VALUES (?, ?, ?, 'sending', ?, NULL, 1, ?, ?)
       ON CONFLICT (key) DO UPDATE SET state = 'sending', upstream_sends = upstream_sends + 1, updated_at = excluded.updated_at`,
      key,
      tool,
      sideEffect,
      JSON.stringify(request),
      now,
      now,
    );
  }

  settle(key: string, state: "in_doubt" | "completed", envelope: Envelope | null, now: number): void {
    this.#recent.delete(key);
    this.#sql.exec(
      "UPDATE idempotency SET state = ?, envelope = ?, updated_at = ? WHERE key = ?",
      state,
      envelope === null ? null : JSON.stringify(envelope),
      now,
      key,
    );
  }
}

/** How the call that sends a key's request answers the identical calls that joined it. */
export interface Inflight {
  resolve: (envelope: Envelope) => void;
  reject: (error: unknown) => void;
}

/**
 * The keys whose request is on its way from this instance: identical concurrent calls share one.
 * In memory on purpose: after a restart nothing is in flight, and a key left "sending" is resent.
 */
export class KeysInFlight {
  readonly #byKey = new Map<string, Promise<Envelope>>();

  has(key: string | null): boolean {
    return key !== null && this.#byKey.has(key);
  }

  /** The keys on their way now; empty after a restart. */
  keys(): ReadonlySet<string> {
    return new Set(this.#byKey.keys());
  }

  /**
   * Makes the key's request visible to identical calls: they wait for its envelope, or for its
   * failure, which reaches them as an interrupted ledger (a resend is safe: the key is recorded).
   */
  mark(key: string | null): Inflight {
    const inflight: Inflight = { resolve: () => {}, reject: () => {} };
    if (key !== null) {
      const shared = new Promise<Envelope>((resolve, reject) => Object.assign(inflight, { resolve, reject }));
      // Nobody may be waiting; an unobserved rejection must not count as an unhandled one.
      shared.catch(() => {});
      this.#byKey.set(key, shared);
    }
    return inflight;
  }

  /** The envelope of the key's request in flight, once it has one. */
  join(key: string): Promise<Envelope> {
    const shared = this.#byKey.get(key);
    if (!shared) throw new Error(`no request of ${key} is in flight to join`);
    return shared;
  }

  done(key: string | null): void {
    if (key !== null) this.#byKey.delete(key);
  }
}

/**
 * The keys between their tenant-wide claim and the commit of their admission, in this instance,
 * counted (identical concurrent calls claim the same key). In memory on purpose: after a restart no
 * call is deciding, and a claim left uncommitted is one no ledger will ever commit.
 */
export class KeysDeciding {
  readonly #count = new Map<string, number>();

  hold(key: string): void {
    this.#count.set(key, (this.#count.get(key) ?? 0) + 1);
  }

  /** One hold ends; releasing a key not held changes nothing. */
  release(key: string): void {
    const left = (this.#count.get(key) ?? 0) - 1;
    if (left > 0) this.#count.set(key, left);
    else this.#count.delete(key);
  }

  has(key: string): boolean {
    return this.#count.has(key);
  }
}
