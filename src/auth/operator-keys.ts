import * as z from "zod";
import { operatorFingerprint } from "./operator-id";

/**
 * OPERATOR_KEYS: `{ tenant: [entry, ...] }` where an entry is a key's SHA-256 hex, or
 * `{ "name": "Dana Reyes", "sha256": "<hex>", "roles": ["support_lead"] }` to give the person
 * holding that key a display name and the roles whose approvals they may decide (`roles` optional).
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

/** A role an operator holds and a tool or tenant rule may require: a lowercase identifier. */
export const RoleSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]*$/, "a role is a lowercase identifier such as finance_lead");

const EntrySchema = z.union([
  HashSchema,
  z.strictObject({ name: OperatorNameSchema, sha256: HashSchema, roles: z.array(RoleSchema).optional() }),
]);

const OperatorKeysSchema = z.record(z.string().min(1), z.array(EntrySchema).min(1));

export interface OperatorKeys {
  /** Key hashes per tenant, as every other key kind keeps them. */
  hashes: Map<string, string[]>;
  /** Display names by key hash, for the keys that have one. */
  names: Map<string, string>;
  /** Roles by key hash, for the keys that hold any. */
  roles: Map<string, string[]>;
}

/** One operator of a tenant as OPERATOR_KEYS configures them. */
export interface ConfiguredOperator {
  /** `operator:<fingerprint>`. */
  id: string;
  name: string | null;
  roles: readonly string[];
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
    const problem = roleProblem(value);
    if (problem) throw new Error(`OPERATOR_KEYS is invalid at ${problem}`);
    throw new Error(
      'OPERATOR_KEYS must be a JSON object mapping each tenant to a list of SHA-256 hex key hashes or {"name": "...", "sha256": "...", "roles": ["..."]} entries',
    );
  }
  const hashes = new Map<string, string[]>();
  const names = new Map<string, string>();
  const roles = new Map<string, string[]>();
  for (const [tenant, entries] of Object.entries(parsed.data)) {
    hashes.set(
      tenant,
      entries.map((entry) => {
        if (typeof entry === "string") return entry;
        names.set(entry.sha256, entry.name);
        if (entry.roles && entry.roles.length > 0) roles.set(entry.sha256, entry.roles);
        return entry.sha256;
      }),
    );
  }
  return { hashes, names, roles };
}

/**
 * Where a malformed role lies, `"acme[1].roles[0]": ...`: the union's own error would only say the
 * entry matches neither form.
 */
function roleProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null) return null;
  for (const [tenant, entries] of Object.entries(value)) {
    if (!Array.isArray(entries)) continue;
    for (const [position, entry] of entries.entries()) {
      const held: unknown = typeof entry === "object" && entry !== null ? entry.roles : undefined;
      if (held === undefined) continue;
      const at = `"${tenant}[${position}].roles`;
      if (!Array.isArray(held)) return `${at}": must be a list of roles, such as ["finance_lead"]`;
      for (const [index, role] of held.entries()) {
        const parsed = RoleSchema.safeParse(role);
        if (!parsed.success) {
          return `${at}[${index}]": ${parsed.error.issues[0]?.message ?? "not a role"} (got ${JSON.stringify(role)})`;
        }
      }
    }
  }
  return null;
}

/** The roles an operator id of a tenant holds; none when its key has none (or is not the tenant's). */
export function operatorRolesOf(keys: OperatorKeys, tenant: string, operatorId: string): string[] {
  const fingerprint = operatorFingerprint(operatorId);
  if (!fingerprint) return [];
  const hash = (keys.hashes.get(tenant) ?? []).find((candidate) => candidate.startsWith(fingerprint));
  return hash ? (keys.roles.get(hash) ?? []) : [];
}

/** Every operator of a tenant, with their name and roles. */
export function operatorsOf(keys: OperatorKeys, tenant: string): ConfiguredOperator[] {
  return (keys.hashes.get(tenant) ?? []).map((hash) => ({
    id: `operator:${hash.slice(0, 12)}`,
    name: keys.names.get(hash) ?? null,
    roles: keys.roles.get(hash) ?? [],
  }));
}

/** The display name configured for an operator id of a tenant, or null when its key has none. */
export function operatorNameOf(keys: OperatorKeys, tenant: string, operatorId: string): string | null {
  const fingerprint = operatorFingerprint(operatorId);
  if (!fingerprint) return null;
  const hash = (keys.hashes.get(tenant) ?? []).find((candidate) => candidate.startsWith(fingerprint));
  return hash ? (keys.names.get(hash) ?? null) : null;
}
