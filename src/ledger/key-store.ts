import type { SideEffect } from "../catalog/define-tool";
import type { CallRecord, KeyState, StoredRequest } from "../machine/run-state";
import type { Envelope } from "../wire/envelope";

interface KeyRow extends Record<string, SqlStorageValue> {
  key: string;
  tool: string;
  side_effect: string | null;
  state: string;
  request: string | null;
  envelope: string | null;
  upstream_sends: number;
  created_at: number;
}

const COLUMNS = "key, tool, side_effect, state, request, envelope, upstream_sends, created_at";

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
    recorded_at: row.created_at,
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

/**
 * What memory holds of the keys: at most 256 rows and 512 KiB of their stored text (request and
 * envelope JSON), which parsed is 1–2 MiB of heap at most. Many runs' objects may share one
 * isolate's memory (128 MB), so a run keeps little: a hundred busy runs in one isolate hold a small
 * part of it. A row whose text alone is over 32 KiB is not kept: it is read again when needed.
 */
const KEPT_KEYS = 256;
const KEPT_TEXT = 512 * 1024;
const KEPT_ROW_TEXT = 32 * 1024;

/** A key as storage holds it (undefined: no row), and its record once a read has built it. */
interface Kept {
  row: KeyRow | undefined;
  record: CallRecord | null | undefined;
  text: number;
}

const textOf = (row: KeyRow | undefined): number =>
  row ? (row.request?.length ?? 0) + (row.envelope?.length ?? 0) : 0;

/** The run's call records, one per idempotency key, in the same database and transactions as its trace. */
export class KeyStore {
  readonly #sql: SqlStorage;
  /**
   * Keys as storage holds them, least recently used first. The object is the table's only writer
   * and each write leaves here the row it wrote (or drops the key when the row is not known whole),
   * so an entry is what a read would find: a call reads its key at several stages (intake, its tool
   * limit, the tenant-wide claim, admission, the fate it reports), a replay's stored envelope is
   * parsed once, and a key just settled is not read back.
   */
  readonly #kept = new Map<string, Kept>();
  #keptText = 0;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /**
   * The record of a key. A record written before requests were stored has none: it takes the
   * request the current call would send (`fallback`), which is what was sent for it then.
   */
  read(key: string, fallback: StoredRequest | null): CallRecord | null {
    let entry = this.#kept.get(key);
    if (entry) {
      // Most recently used last.
      this.#kept.delete(key);
      this.#kept.set(key, entry);
    } else {
      const row = this.#sql
        .exec<KeyRow>(`SELECT ${COLUMNS} FROM idempotency WHERE key = ?`, key)
        .toArray()[0];
      entry = this.#keep(key, row);
    }
    const { row } = entry;
    if (!row) return null;
    // A record stored without its request takes this call's (`fallback`), so it is built anew.
    if (row.request === null) return recordOf(row, fallback);
    if (entry.record === undefined) entry.record = frozen(recordOf(row, null));
    return entry.record;
  }

  /** What memory holds of the keys is dropped: a transaction that failed may have written some. */
  forget(): void {
    this.#kept.clear();
    this.#keptText = 0;
  }

  /** Keeps `row` as the key's row (undefined: none), within the bounds; a row too large is not kept. */
  #keep(key: string, row: KeyRow | undefined, record?: CallRecord | null): Kept {
    this.#unkeep(key);
    const entry: Kept = { row, record: row ? record : null, text: textOf(row) };
    if (entry.text > KEPT_ROW_TEXT) return entry;
    this.#kept.set(key, entry);
    this.#keptText += entry.text;
    for (const [oldest, kept] of this.#kept) {
      if (this.#kept.size <= KEPT_KEYS && this.#keptText <= KEPT_TEXT) break;
      this.#kept.delete(oldest);
      this.#keptText -= kept.text;
    }
    return entry;
  }

  #unkeep(key: string): void {
    const entry = this.#kept.get(key);
    if (!entry) return;
    this.#kept.delete(key);
    this.#keptText -= entry.text;
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
    const request = JSON.stringify(record.request);
    this.#unkeep(record.key);
    this.#sql.exec(
      `INSERT INTO idempotency (key, tool, side_effect, state, request, envelope, upstream_sends, created_at, updated_at)
       VALUES (?, ?, ?, 'held', ?, NULL, 0, ?, ?)`,
      record.key,
      record.tool,
      record.side_effect,
      request,
      now,
      now,
    );
    this.#keep(record.key, {
      key: record.key,
      tool: record.tool,
      side_effect: record.side_effect,
      state: "held",
      request,
      envelope: null,
      upstream_sends: 0,
      created_at: now,
    });
  }

  /**
   * Removes a held key that never left: an operator's edit moved its approval to the edited call's
   * key. Only a held key is removed; one whose request may have left is never forgotten.
   */
  drop(key: string): void {
    const kept = this.#kept.get(key);
    this.#unkeep(key);
    this.#sql.exec("DELETE FROM idempotency WHERE key = ? AND state = 'held'", key);
    if (kept) this.#keep(key, kept.row?.state === "held" ? undefined : kept.row, kept.record);
  }

  /**
   * Records that the key's request is about to leave: first send, an approval's, or a resend of a
   * key in doubt. The request is written only when the key is new: a stored one is never replaced.
   * A key still `sending` was left so by a send a restart cut off, which may have acted: the answer
   * kept from before it no longer speaks for every send, so it is cleared, and the history this
   * send settles against says "may have acted" (machine/certainty.ts), never an older "not done".
   */
  send(key: string, tool: string, sideEffect: SideEffect, request: StoredRequest, now: number): void {
    const kept = this.#kept.get(key);
    this.#unkeep(key);
    const text = kept?.row ? null : JSON.stringify(request);
    this.#sql.exec(
      `INSERT INTO idempotency (key, tool, side_effect, state, request, envelope, upstream_sends, created_at, updated_at)
       VALUES (?, ?, ?, 'sending', ?, NULL, 1, ?, ?)
       ON CONFLICT (key) DO UPDATE SET state = 'sending', upstream_sends = upstream_sends + 1,
         envelope = CASE WHEN idempotency.state = 'sending' THEN NULL ELSE idempotency.envelope END,
         updated_at = excluded.updated_at`,
      key,
      tool,
      sideEffect,
      text ?? JSON.stringify(request),
      now,
      now,
    );
    // Without a kept entry whether the row existed is unknown: the next read reads it.
    if (!kept) return;
    if (kept.row) {
      const cutOff = kept.row.state === "sending";
      const envelope = cutOff ? null : kept.row.envelope;
      const row = { ...kept.row, state: "sending", envelope, upstream_sends: kept.row.upstream_sends + 1 };
      const record = kept.record
        ? frozen({
            ...kept.record,
            state: "sending" as const,
            sends: row.upstream_sends,
            envelope: cutOff ? null : kept.record.envelope,
          })
        : undefined;
      this.#keep(key, row, record);
    } else {
      this.#keep(key, {
        key,
        tool,
        side_effect: sideEffect,
        state: "sending",
        request: text,
        envelope: null,
        upstream_sends: 1,
        created_at: now,
      });
    }
  }

  settle(key: string, state: "in_doubt" | "completed", envelope: Envelope | null, now: number): void {
    const kept = this.#kept.get(key);
    this.#unkeep(key);
    const text = envelope === null ? null : JSON.stringify(envelope);
    this.#sql.exec(
      "UPDATE idempotency SET state = ?, envelope = ?, updated_at = ? WHERE key = ?",
      state,
      text,
      now,
      key,
    );
    // The record is built again by the next read (a replay), from the text just written.
    if (kept) this.#keep(key, kept.row ? { ...kept.row, state, envelope: text } : undefined);
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
