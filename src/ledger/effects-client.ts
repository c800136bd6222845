import { tenantObject } from "../config/placement";
import type { TenantConfig } from "../config/tenants";
import { type EffectClaim, shardOf, subjectDigest, userCapsOf, userDigest, utcDay } from "../effects/claim";
import type { TenantCheck } from "../effects/reasons";
import type { EffectUpdate, ShardReservation } from "../effects/shard-rules";
import type { Env } from "../env";
import type { ValueUsage } from "../wire/effects";
import type { EffectShard } from "./effect-shard";
import type { RpcClient } from "./rpc-client";

/**
 * The tenant-wide step of a new effect, as a run's ledger takes it: the claim goes to the shard of
 * its identity (which also reserves against its lease of the daily cap) and, when the tool names a
 * subject or the run's user has daily caps and either hashes elsewhere, to the subject's and the
 * user's shards, all at once (one request per shard, holding every role it has). Every shard asked holds the
 * claim whatever it answers, so the run tells each of them the key's fate afterwards.
 */
export async function claimTenantWide(
  env: Env,
  tenant: string,
  config: TenantConfig,
  claim: EffectClaim,
  /** The key of this run's claim the new one replaces (an edited approval's call as asked), if any. */
  replaces: string | null = null,
): Promise<TenantCheck> {
  const started = Date.now();
  const shards = config.effect_shards;
  const caps = claim.value ? config.value_caps[claim.value.currency] : undefined;
  const subjectCap = caps?.per_subject_day ?? null;
  const subject = subjectDigest(claim);
  const subjectShard = subject ? shardOf(await subject, shards) : null;
  // An identity that names its subject lives in the subject's shard: one step decides both, so the
  // first of many racing claims on one order is the one that fits, and one request is made, not two.
  const identityShard =
    subjectShard !== null && claim.value?.subject_in_identity
      ? subjectShard
      : shardOf(claim.identity_digest, shards);
  const userCaps = userCapsOf(config, claim);
  const user = userCaps ? userDigest(claim) : null;
  const userShard = user ? shardOf(await user, shards) : null;
  const requests = new Map<number, ShardReservation>();
  const at = (shard: number): ShardReservation => {
    const known = requests.get(shard);
    if (known) return known;
    const made: ShardReservation = {
      tenant,
      shard,
      shards,
      claim,
      identity: false,
      per_day: null,
      per_subject_day: null,
      per_user_day: null,
      replaces,
    };
    requests.set(shard, made);
    return made;
  };
  Object.assign(at(identityShard), { identity: true, per_day: caps?.per_day ?? null });
  if (subjectCap !== null && subjectShard !== null) at(subjectShard).per_subject_day = subjectCap;
  if (userShard !== null) at(userShard).per_user_day = userCaps;
  const verdicts = await Promise.all(
    [...requests.values()].map((request) => shardStub(env, tenant, request.shard).reserve(request)),
  );
  return {
    claim,
    shards: [...requests.keys()],
    earlier: verdicts.flatMap((verdict) => verdict.earlier),
    over: verdicts.find((verdict) => verdict.over)?.over ?? null,
    ms: Date.now() - started,
  };
}

/** Tells every shard of a claim how far its effect got; each applies it idempotently, only forwards. */
export async function reportEffect(
  env: Env,
  tenant: string,
  shards: readonly number[],
  update: EffectUpdate,
): Promise<void> {
  await Promise.all(shards.map((shard) => shardStub(env, tenant, shard).apply(update)));
}

/**
 * Asks every shard of a claim to reconcile it now, as their alarm would: the ledger, asked back,
 * answers "released" for a key it never committed, and each shard releases the claim.
 */
export async function reconcileClaim(
  env: Env,
  tenant: string,
  shards: readonly number[],
  key: string,
): Promise<void> {
  await Promise.all(shards.map((shard) => shardStub(env, tenant, shard).reconcile(key)));
}

/** What the tenant's runs moved today in each capped currency, summed over its shards (the operator's view). */
export async function valueUsageToday(env: Env, tenant: string, config: TenantConfig): Promise<ValueUsage[]> {
  const day = utcDay(Date.now());
  const shards = Array.from({ length: config.effect_shards }, (_, shard) => shardStub(env, tenant, shard));
  return Promise.all(
    Object.entries(config.value_caps).map(async ([currency, caps]) => {
      const parts = await Promise.all(shards.map((shard) => shard.usage(currency, day)));
      return {
        currency,
        day,
        per_day: caps.per_day ?? null,
        used: parts.reduce((sum, part) => sum + part.used, 0),
        reserved: parts.reduce((sum, part) => sum + part.reserved, 0),
        overrides: parts.reduce((sum, part) => sum + part.overrides, 0),
      };
    }),
  );
}

/** An effect shard's RPC surface as the worker uses it: its methods' own signatures (`rpc-client.ts`). */
type ShardClient = RpcClient<EffectShard, "reserve" | "apply" | "reconcile" | "usage">;

function shardStub(env: Env, tenant: string, shard: number): ShardClient {
  return tenantObject(env, env.EFFECT_SHARD, tenant, `${tenant}/${shard}`);
}
