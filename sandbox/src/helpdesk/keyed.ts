import { IDEMPOTENCY_LEASE_MS, requestFingerprint, reserve, storeResult } from "../idempotency";
import type { ToolRefusal, WriteOutcome } from "./model";
import type { Written } from "./records";

/**
 * Idempotency keys of the helpdesk's writes, with the REST sandbox's semantics and its table: the
 * same key with the same arguments replays the first result, with other arguments it is refused.
 * The key is reserved, the write applied and its result stored in one store transaction, so a key
 * is never left half-used and a replay never applies the write again.
 */

/** The `_meta` key a `tools/call` names its idempotency key with. */
export const IDEMPOTENCY_META_KEY = "io.edge-tool-proxy/idempotency-key";

export interface ToolCallKey {
  key: string;
  fingerprint: string;
}

const MAX_KEY_LENGTH = 255;

export type ResolvedKey = { ok: true; key: ToolCallKey | null } | { ok: false; refusal: ToolRefusal };

/**
 * The key of one call: from its `_meta` or the HTTP `Idempotency-Key` header (both may be sent if
 * they agree). It is bound to the tool and its validated arguments.
 */
export async function resolveKey(
  meta: Record<string, unknown> | undefined,
  header: string | undefined,
  tool: string,
  args: unknown,
): Promise<ResolvedKey> {
  const fromMeta = meta?.[IDEMPOTENCY_META_KEY];
  if (fromMeta !== undefined && typeof fromMeta !== "string") {
    return invalid(`_meta["${IDEMPOTENCY_META_KEY}"] must be a string.`);
  }
  if (fromMeta !== undefined && header !== undefined && fromMeta !== header) {
    return invalid(`_meta["${IDEMPOTENCY_META_KEY}"] and the Idempotency-Key header name different keys.`);
  }
  const key = fromMeta ?? header;
  if (key === undefined) return { ok: true, key: null };
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    return invalid(`An idempotency key must be 1-${MAX_KEY_LENGTH} characters.`);
  }
  return {
    ok: true,
    key: { key, fingerprint: await requestFingerprint("MCP", `tools/call ${tool}`, JSON.stringify(args)) },
  };
}

function invalid(message: string): ResolvedKey {
  return { ok: false, refusal: { code: "invalid_request", message } };
}

type StoredWrite<T> = { ok: true; result: T } | { ok: false; refusal: ToolRefusal };

/** Runs `write` once per key; call it inside one store transaction. */
export function keyedWrite<T>(
  sql: SqlStorage,
  tenant: string,
  key: ToolCallKey | null,
  write: () => Written<T>,
): WriteOutcome<T> {
  if (key === null) return toOutcome(write(), "applied");
  const now = Date.now();
  const reservation = reserve(sql, tenant, key.key, key.fingerprint, now + IDEMPOTENCY_LEASE_MS, now);
  switch (reservation.state) {
    case "replay":
      return toOutcome(JSON.parse(reservation.body) as StoredWrite<T>, "replayed");
    case "reused":
      return {
        kind: "refused",
        refusal: {
          code: "idempotency_key_reused",
          message: "This idempotency key was already used with different arguments.",
        },
      };
    case "in_use":
      // Only a request that died mid-transaction could hold the key; the lease frees it shortly.
      return {
        kind: "refused",
        refusal: {
          code: "idempotency_key_in_use",
          message: "A call with this idempotency key is still running.",
        },
      };
    case "reserved": {
      const written = write();
      storeResult(sql, tenant, key.key, written.ok ? 200 : 422, JSON.stringify(written));
      return toOutcome(written, "applied");
    }
  }
}

function toOutcome<T>(written: StoredWrite<T>, kind: "applied" | "replayed"): WriteOutcome<T> {
  return written.ok ? { kind, result: written.result } : { kind: "refused", refusal: written.refusal };
}
