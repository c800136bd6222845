import { errorBody, jsonText } from "./http";
import type { IdempotencyRow } from "./rows";

/**
 * Idempotency-Key handling, modelled on payment APIs: a key is reserved when a request starts,
 * holds the stored response once it finishes, and is bound to a fingerprint of the request so a
 * key reused for a different request is refused instead of silently replaying the wrong answer.
 */

export type Reservation =
  | { state: "reserved" }
  | { state: "replay"; status: number; body: string }
  | { state: "in_use" }
  | { state: "reused" };

/**
 * How long a reservation blocks other requests with the same key unless renewed. A request whose
 * caller went away is cancelled without releasing its key; the lease frees the key soon after, the
 * way a real upstream's lock expires after a crashed request. Hanging requests renew it every
 * HEARTBEAT_MS, so "still running" means alive, not "armed with a long hang".
 */
export const IDEMPOTENCY_LEASE_MS = 3_000;
export const HEARTBEAT_MS = 1_000;

export const MAX_KEY_LENGTH = 255;

/** An answer as the sandbox sends it: status, body text, and headers beside the content type. */
export interface AnswerText {
  status: number;
  text: string;
  headers: Record<string, string>;
}

/**
 * What a request is answered when the key's reservation is not its own: the stored answer replayed,
 * or why the key cannot serve it (another request holds it, or it was used for a different one).
 * Null when the request reserved the key and runs.
 */
export function reservationAnswer(reservation: Reservation): AnswerText | null {
  const refused = (status: number, code: string, message: string) => ({
    status,
    text: jsonText(errorBody(code, message)),
    headers: {},
  });
  switch (reservation.state) {
    case "reserved":
      return null;
    case "replay":
      return {
        status: reservation.status,
        text: reservation.body,
        headers: { "Idempotent-Replayed": "true" },
      };
    case "in_use":
      return refused(
        409,
        "idempotency_key_in_use",
        "A request with this Idempotency-Key is still being processed. Retry later.",
      );
    case "reused":
      return refused(
        422,
        "idempotency_key_reused",
        "This Idempotency-Key was already used with a different request.",
      );
  }
}

/** Fingerprint of the request: the same key on another endpoint counts as a different request. */
export async function requestFingerprint(method: string, path: string, body: string): Promise<string> {
  const data = new TextEncoder().encode(`${method} ${path}\n${body}`);
  const digest = await crypto.subtle.digest("SHA-256", data);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function reserve(
  sql: SqlStorage,
  tenant: string,
  key: string,
  fingerprint: string,
  lockedUntil: number,
  now: number,
): Reservation {
  const existing = sql
    .exec<IdempotencyRow>("SELECT * FROM idempotency WHERE tenant = ? AND key = ?", tenant, key)
    .toArray()[0];
  if (!existing) {
    sql.exec(
      "INSERT INTO idempotency (tenant, key, request_hash, locked_until, created_at) VALUES (?, ?, ?, ?, ?)",
      tenant,
      key,
      fingerprint,
      lockedUntil,
      new Date(now).toISOString(),
    );
    return { state: "reserved" };
  }
  if (existing.request_hash !== fingerprint) return { state: "reused" };
  if (existing.status !== null && existing.body !== null) {
    return { state: "replay", status: existing.status, body: existing.body };
  }
  if ((existing.locked_until ?? 0) > now) return { state: "in_use" };
  // The first request holding this key was abandoned; this one takes over.
  sql.exec("UPDATE idempotency SET locked_until = ? WHERE tenant = ? AND key = ?", lockedUntil, tenant, key);
  return { state: "reserved" };
}

export function renew(sql: SqlStorage, tenant: string, key: string, lockedUntil: number): void {
  sql.exec(
    "UPDATE idempotency SET locked_until = ? WHERE tenant = ? AND key = ? AND status IS NULL",
    lockedUntil,
    tenant,
    key,
  );
}

export function storeResult(
  sql: SqlStorage,
  tenant: string,
  key: string,
  status: number,
  body: string,
): void {
  sql.exec(
    "UPDATE idempotency SET status = ?, body = ?, locked_until = NULL WHERE tenant = ? AND key = ?",
    status,
    body,
    tenant,
    key,
  );
}

/** What an Idempotency-Key holds when asked for its answer rather than sent again. */
export type StoredAnswer =
  | { state: "answered"; status: number; body: string }
  | { state: "running" }
  | { state: "unknown" };

/**
 * The answer stored under a key, for a caller that lost it on the way (a cut-off body, a dropped
 * connection): a read, so asking never runs the request. A reservation whose lease lapsed without
 * an answer is a request that never ran, as unknown as a key never sent.
 */
export function storedAnswer(sql: SqlStorage, tenant: string, key: string, now: number): StoredAnswer {
  const row = sql
    .exec<IdempotencyRow>("SELECT * FROM idempotency WHERE tenant = ? AND key = ?", tenant, key)
    .toArray()[0];
  if (!row) return { state: "unknown" };
  if (row.status !== null && row.body !== null)
    return { state: "answered", status: row.status, body: row.body };
  return (row.locked_until ?? 0) > now ? { state: "running" } : { state: "unknown" };
}

/** Requests rejected before they ran (malformed bodies) leave nothing behind, as on Stripe. */
export function release(sql: SqlStorage, tenant: string, key: string): void {
  sql.exec("DELETE FROM idempotency WHERE tenant = ? AND key = ? AND status IS NULL", tenant, key);
}
