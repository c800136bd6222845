import type { ToolSpec } from "../catalog/define-tool";
import type { TenantConfig } from "../config/tenants";
import { canonicalJson } from "../core/canonical-json";
import { sha256Hex } from "../core/digest";
import type { RunUser } from "../wire/run-user";

/**
 * What a write or destructive call claims of its tenant's shared state before its request may leave:
 * the business thing it changes (its identity) and the value it moves. A claim is bound to the
 * call's idempotency key, so a retry of the call claims nothing more.
 */
export interface EffectClaim {
  key: string;
  run_id: string;
  /** The tool as `namespace.name`. */
  tool: string;
  /** The values of the identity's fields (every argument when the tool declares none). */
  identity: Record<string, unknown>;
  /** SHA-256 of the tool and the canonical identity: what two effects must share to be the same. */
  identity_digest: string;
  window_ms: number;
  /** The arguments as the trace keeps them (sensitive fields masked), for whoever is shown this effect later. */
  args: Record<string, unknown>;
  at: number;
  /** The UTC day the claim counts in, `YYYY-MM-DD`. */
  day: string;
  value: ClaimedValue | null;
  /** The tenant allows this tool's effect to repeat across runs (`repeat_effects`). */
  repeatable: boolean;
  /**
   * The user the run acts for, whose daily caps the claim counts against; null: the run names none.
   * Optional, like `destructive`, because a claim crosses to shards that may run another deploy's code.
   */
  user?: ClaimUser | null;
  /** A destructive call: it counts against its user's daily destructive calls. */
  destructive?: boolean;
}

/** A user as a claim names them: the identity provider's issuer and the user's subject there. */
export interface ClaimUser {
  iss: string;
  sub: string;
}

export interface ClaimedValue {
  amount: number;
  currency: string;
  subject: string | null;
  /**
   * The subject is one of the identity's fields: two effects on one identity share their subject,
   * so the identity can live in the subject's shard and both are decided in one step.
   */
  subject_in_identity: boolean;
}

/** The identity field a per-user effect names its user in (`iss sub`), shown with the identity. */
const USER_IDENTITY_FIELD = "@user";

/** The UTC day of a moment, `YYYY-MM-DD`: the unit of the daily caps. */
export function utcDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The claim of a valid write or destructive call, or null for a tool whose effect has no identity. */
export async function claimOf(input: {
  tool: ToolSpec;
  tenant: TenantConfig;
  key: string;
  run_id: string;
  args: Record<string, unknown>;
  trace_args: unknown;
  now: number;
  user: RunUser | null;
}): Promise<EffectClaim | null> {
  const { tool, tenant, args, now } = input;
  if (!tool.effect) return null;
  const fields = tool.effect.fields ?? Object.keys(args).sort();
  const named = Object.fromEntries(fields.map((field) => [field, args[field] ?? null]));
  // The user joins the identity last, under a field of its own: no argument (not even one named
  // `user` or `@user`) can stand for the run's user or hide it.
  const identity =
    tool.effect.per_user && input.user ? { ...named, [USER_IDENTITY_FIELD]: userKey(input.user) } : named;
  const name = `${tool.namespace}.${tool.name}`;
  return {
    key: input.key,
    run_id: input.run_id,
    tool: name,
    identity,
    identity_digest: await sha256Hex(canonicalJson({ tool: name, identity })),
    window_ms: tool.effect.window_ms,
    args: (input.trace_args ?? args) as Record<string, unknown>,
    at: now,
    day: utcDay(now),
    value: claimedValue(tool, args, fields),
    repeatable: tenant.repeat_effects[tool.namespace]?.includes(tool.name) ?? false,
    user: input.user ? { iss: input.user.iss, sub: input.user.sub } : null,
    destructive: tool.side_effect === "destructive",
  };
}

function claimedValue(
  tool: ToolSpec,
  args: Record<string, unknown>,
  identityFields: readonly string[],
): ClaimedValue | null {
  if (!tool.value) return null;
  const amount = args[tool.value.field];
  // The catalog checks that the field is an integer argument, and the arguments passed validation.
  if (typeof amount !== "number" || !Number.isInteger(amount)) return null;
  const subject = tool.value.subject === null ? null : args[tool.value.subject];
  return {
    amount,
    currency: tool.value.currency,
    subject: subject === null || subject === undefined ? null : String(subject),
    subject_in_identity: tool.value.subject !== null && identityFields.includes(tool.value.subject),
  };
}

/**
 * Which of the tenant's effect shards holds a digest's state: the digest's first 32 bits modulo the
 * shard count. Stable for a given count; changing `effect_shards` moves identities between shards,
 * so a change is made when no window of the old count matters any more (see docs/guarantees.md, "Value caps").
 */
export function shardOf(digest: string, shards: number): number {
  return Number.parseInt(digest.slice(0, 8), 16) % shards;
}

/** The digest a subject's daily total is sharded by. */
export function subjectDigest(claim: EffectClaim): Promise<string> | null {
  const { value } = claim;
  return value?.subject == null ? null : sha256Hex(`${value.currency}:${value.subject}`);
}

/** How a shard's rows name a claim's user: issuer and subject, so two providers' `alice` stay apart. */
export function userKey(user: ClaimUser): string {
  return `${user.iss} ${user.sub}`;
}

/** The digest a user's daily totals are sharded by. */
export function userDigest(claim: EffectClaim): Promise<string> | null {
  return claim.user ? sha256Hex(`user:${userKey(claim.user)}`) : null;
}

/** A user's daily caps a claim counts against: its currency's value cap, and destructive calls for a destructive call. */
export interface UserDayCaps {
  value: number | null;
  destructive: number | null;
}

/** The tenant's per-user daily caps that apply to a claim, or null when none does (or the run names no user). */
export function userCapsOf(tenant: TenantConfig, claim: EffectClaim): UserDayCaps | null {
  const caps = tenant.users?.per_user_day;
  if (!caps || !claim.user) return null;
  const value = claim.value ? (caps.value?.[claim.value.currency] ?? null) : null;
  const destructive = claim.destructive ? (caps.destructive ?? null) : null;
  return value === null && destructive === null ? null : { value, destructive };
}
