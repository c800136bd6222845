import * as z from "zod";
import { operatorFingerprint } from "./operator-id";

/**
 * OPERATOR_KEYS: `{ tenant: [entry, ...] }` where an entry is a key's SHA-256 hex, or
 * `{ "name": "Dana Reyes", "sha256": "<hex>" }` to give the person holding that key a display name.
 * The name is what the console shows and what decisions and traces record beside the operator id;
 * the id (`operator:<fingerprint>`) stays what identifies them.
 */
const HashSchema = z.string().regex(/^[0-9a-f]{64}$/, "a SHA-256 hex digest (64 lowercase hex characters)");

export const OperatorNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(64)
  // Shown in pages and recorded in traces: printable text only.
  .regex(/^[^\p{C}]+$/u, "printable characters only");

const EntrySchema = z.union([HashSchema, z.strictObject({ name: OperatorNameSchema, sha256: HashSchema })]);

const OperatorKeysSchema = z.record(z.string().min(1), z.array(EntrySchema).min(1));

export interface OperatorKeys {
  /** Key hashes per tenant, as every other key kind keeps them. */
  hashes: Map<string, string[]>;
  /** Display names by key hash, for the keys that have one. */
  names: Map<string, string>;
}

export function parseOperatorKeys(raw: string | undefined): OperatorKeys {
  let value: unknown;
  try {
    value = JSON.parse(raw ?? "");
  } catch {
    value = undefined;
  }
  const parsed = OperatorKeysSchema.safeParse(value);
  if (!parsed.success) {
    throw new Error(
      'OPERATOR_KEYS must be a JSON object mapping each tenant to a list of SHA-256 hex key hashes or {"name": "...", "sha256": "..."} entries',
    );
  }
  const hashes = new Map<string, string[]>();
  const names = new Map<string, string>();
  for (const [tenant, entries] of Object.entries(parsed.data)) {
    hashes.set(
      tenant,
      entries.map((entry) => {
        if (typeof entry === "string") return entry;
        names.set(entry.sha256, entry.name);
        return entry.sha256;
      }),
    );
  }
  return { hashes, names };
}

/** The display name configured for an operator id of a tenant, or null when its key has none. */
export function operatorNameOf(keys: OperatorKeys, tenant: string, operatorId: string): string | null {
  const fingerprint = operatorFingerprint(operatorId);
  if (!fingerprint) return null;
  const hash = (keys.hashes.get(tenant) ?? []).find((candidate) => candidate.startsWith(fingerprint));
  return hash ? (keys.names.get(hash) ?? null) : null;
}
