import type { ToolSpec } from "../catalog/define-tool";
import type { TenantConfig } from "../config/tenants";
import { claimOf } from "../effects/claim";
import { type EffectFate, fateOfKey } from "../effects/fate";
import type { TenantCheck } from "../effects/reasons";
import type { RunMeta } from "../machine/run-state";
import type { RunPorts } from "./ports";

/** A call that may be a new effect: an agent's call, or the edited call of an operator's approval. */
export interface NewEffect {
  run: RunMeta;
  tool: ToolSpec;
  tenant: TenantConfig;
  key: string;
  args: Record<string, unknown>;
  /** The arguments as the trace shows them (masked). */
  trace_args: unknown;
  now: number;
  /** The key of this run's claim the new one replaces (an edited approval's call as asked), if any. */
  replaces: string | null;
}

export type TenantWideStep =
  /** Not a new effect (the key is recorded or in flight here, or the tool claims nothing): nothing was asked. */
  | { kind: "none" }
  /** Claimed; the key is "deciding" until the caller's commit, and the caller releases it. */
  | { kind: "claimed"; check: TenantCheck }
  /** The shards could not be reached: nothing may be reserved or sent; a claim they made anyway is released by their reconciliation. */
  | { kind: "unreachable" };

/**
 * The tenant-wide step of a new effect, one for the agent's call and the operator's edit: its claim
 * goes to the tenant's effect shards before the admission (or the decision) commits the key. The
 * key is "deciding" meanwhile, so a shard reconciling it waits rather than release a claim about to
 * be committed.
 */
export async function claimTenantWide(ports: RunPorts, effect: NewEffect): Promise<TenantWideStep> {
  const { run, key } = effect;
  if (ports.inflight.has(key) || ports.reads.key(key, null)) return { kind: "none" };
  const claim = await claimOf({
    tool: effect.tool,
    tenant: effect.tenant,
    key,
    run_id: run.run_id,
    args: effect.args,
    trace_args: effect.trace_args,
    now: effect.now,
    user: run.user ?? null,
  });
  if (!claim) return { kind: "none" };
  ports.deciding.hold(key);
  try {
    return {
      kind: "claimed",
      check: await ports.tenantWide.claim(run.tenant, effect.tenant, claim, effect.replaces),
    };
  } catch (error) {
    ports.deciding.release(key);
    console.error(`the tenant-wide step of ${key} failed; nothing was reserved, decided or sent`, error);
    return { kind: "unreachable" };
  }
}

/**
 * The claim of a key its decision did not commit (refused, lost to another operator's decision, or
 * failed) is given back now: its shards ask this ledger what became of the key, as their alarm
 * would, and release it. Another call deciding or holding the same key keeps it.
 */
export async function releaseUncommitted(ports: RunPorts, tenant: string, check: TenantCheck): Promise<void> {
  const { key } = check.claim;
  if (ports.deciding.has(key) || ports.inflight.has(key) || ports.reads.key(key, null)) return;
  try {
    await ports.tenantWide.reconcile(tenant, check.shards, key);
  } catch (error) {
    // Left pending, the claim is released by its shards' alarm a few seconds after it was made.
    console.error(`releasing the uncommitted claim of ${key} failed; the shards' alarm releases it`, error);
  }
}

/**
 * What became of a key a tenant shard holds a claim of (its reconciliation asks): "deciding" while
 * a call of this instance is between its claim and its commit, else the committed key's fate; a
 * key never committed (or a run not here) was never dispatched, so its claim is released.
 */
export function effectFate(ports: RunPorts, tenant: string, key: string): EffectFate | "deciding" {
  if (ports.deciding.has(key)) return "deciding";
  if (ports.reads.run()?.tenant !== tenant) return "released";
  return fateOfKey(ports.reads.key(key, null), ports.reads.approvalOfKey(key));
}
