import * as z from "zod";
import { runLimitsSchema } from "../wire/run-status";
import { runUserSchema } from "../wire/run-user";
import { signToken, type TokenVerification, verifyToken } from "./signed-token";

/** An open that stored nothing, as a run's credential carries it (`runs/pending-open.ts`). */
export const PendingOpenClaimsSchema = z.object({
  /** When it was opened (epoch ms): its wall clock runs from here, not from its first request. */
  at: z.number(),
  limits: z.lazy(runLimitsSchema),
  repeat_threshold: z.number(),
  /** The catalog version it was opened under, which its tool list showed. */
  catalog_version: z.string(),
  /**
   * A short digest of each tool its tool list showed, name and version (`workflow/run-tools.ts`):
   * the run, created later, pins as unknown only the tools whose version moved since. Absent in
   * tokens issued before it was carried.
   */
  tools_seen: z.string().optional(),
  /** The namespaces its tools may come from. */
  reach: z.array(z.string()),
  /** Whom the run acts for, as verified when it was opened: signed into the credential, never sent by a model. */
  user: z.lazy(runUserSchema).optional(),
  /** The agent profile that opened it; absent for a tenant key. */
  profile: z.string().optional(),
});
export type PendingOpenClaims = z.infer<typeof PendingOpenClaimsSchema>;

/** What a run token lets its holder do: call tools of one namespace in one run of one tenant. */
export const RunTokenClaimsSchema = z.object({
  tenant: z.string(),
  run: z.string(),
  ns: z.string(),
  exp: z.number(),
  /** The tools the run was opened with (`namespace.tool`), when it was opened with a subset. */
  tools: z.array(z.string()).optional(),
  /**
   * An open not stored yet: what the run's ledger is created from on the run's first request. An
   * open stores nothing, so a run that is never called costs no object, no alarm and no entry.
   */
  open: PendingOpenClaimsSchema.optional(),
});
export type RunTokenClaims = z.infer<typeof RunTokenClaimsSchema>;

const PREFIX = "rt1";

export function issueRunToken(claims: RunTokenClaims, keys: readonly string[]): Promise<string> {
  return signToken(PREFIX, claims, keys);
}

/**
 * Tokens this isolate already verified, per key list: an agent sends the same token on every call,
 * and an HMAC per call is the largest fixed cost of the hot path. Keyed by the key list's identity
 * (the config is loaded once per isolate), so a rotation that drops a key starts a fresh cache.
 * Expiry is still checked on every use.
 */
const verified = new WeakMap<readonly string[], Map<string, RunTokenClaims>>();
const MAX_CACHED_TOKENS = 4096;

export async function verifyRunToken(
  token: string,
  keys: readonly string[],
  now: number = Date.now(),
): Promise<TokenVerification<RunTokenClaims>> {
  let cache = verified.get(keys);
  if (!cache) {
    cache = new Map();
    verified.set(keys, cache);
  }
  const known = cache.get(token);
  if (known) return known.exp > now ? { ok: true, payload: known } : { ok: false, reason: "expired" };
  const result = await verifyToken(
    PREFIX,
    token,
    keys,
    (value) => {
      const parsed = RunTokenClaimsSchema.safeParse(value);
      return parsed.success ? parsed.data : null;
    },
    now,
  );
  if (result.ok) {
    if (cache.size >= MAX_CACHED_TOKENS) cache.clear();
    cache.set(token, result.payload);
  }
  return result;
}
