import type { Env } from "../env";
import type { RunMeta } from "../machine/run-state";
import { recordHighRisk } from "../metrics/record";
import { type RunRateGate, runRateGate } from "../ratelimit/run-gate";
import type { RunPorts } from "../workflow/ports";
import type { ApprovalWaiters } from "./approval-waiters";
import * as tables from "./commit";
import { claimTenantWide, reconcileClaim } from "./effects-client";
import type { KeysDeciding, KeysInFlight } from "./key-store";
import type { RunDirectory } from "./run-index";
import type { RunPublisher } from "./run-publisher";
import { recordSessionActivity } from "./session-activity";

/** What of the run ledger its workflow's ports are built on: its stores and what it keeps in memory. */
export interface LedgerParts {
  env: Env;
  ctx: DurableObjectState;
  stores: tables.LedgerStores;
  keeping: RunPorts["keeping"];
  inflight: KeysInFlight;
  deciding: KeysDeciding;
  deferredReads: tables.DeferredReads;
  publisher: RunPublisher;
  directory: RunDirectory;
  waiters: ApprovalWaiters;
  rate: RunRate;
  run(): RunMeta | null;
  spent(run: RunMeta): void;
  commit: RunPorts["commit"];
  createPending: RunPorts["createPending"];
}

/** The run ledger's storage and memory behind the workflow's ports (`workflow/ports.ts`). */
export function runPorts(parts: LedgerParts): RunPorts {
  const { env, ctx, stores, inflight, deferredReads, publisher, directory } = parts;
  const loaded = () => {
    const run = parts.run();
    if (!run) throw new Error("the run ledger has no run loaded");
    return run;
  };
  return {
    env,
    now: () => Date.now(),
    reads: {
      run: parts.run,
      key: (key, request) => stores.keys.read(key, request),
      approval: (id) => stores.approvals.byId(id),
      approvalOfKey: (key) => stores.approvals.byKey(key),
      approvalOfAskedKey: (key) => stores.approvals.byAskedKey(key),
      pending: () => stores.approvals.pending(),
      discoveryUsed: () => stores.run.countDiscovery(),
      callView: (call, tenant, tenantWide) =>
        tables.callView(
          stores,
          loaded(),
          call,
          {
            inflight: inflight.has(call.key),
            uncommittedReads: deferredReads.count(call.digest),
            maxOpenApprovals: tenant.maxOpenApprovals,
            approvalSlaMs: tenant.approvalSlaMs,
          },
          tenantWide,
        ),
      decisionView: (approvalId, edit) => tables.decisionView(stores, loaded(), approvalId, edit),
      settlementView: (key, approval) => tables.settlementView(stores, loaded(), key, approval),
      interruptedView: (run) => tables.interruptedView(stores, run, inflight.keys()),
    },
    commit: parts.commit,
    deferredReads: {
      hold(digest, writes) {
        const spent = tables.spendInMemory(loaded(), writes);
        if (!spent) return null;
        parts.spent(spent);
        return deferredReads.hold(digest, writes);
      },
      release: (read) => deferredReads.release(read),
    },
    outbox: {
      publish: (changed, awaitDelivery) => publisher.publish(changed, awaitDelivery),
      learnCall: (tool, args) => directory.learnCall(tool, args),
      async deliverOwed(tenant) {
        await directory.deliver(tenant);
        // No answer waits for the alarm: what its deliveries acknowledged is deleted now.
        stores.outbox.deleteAcknowledged();
      },
      owesAudit: () => stores.outbox.owesAudit(),
    },
    inflight,
    deciding: parts.deciding,
    alarm: { schedule: () => publisher.scheduleAlarm() },
    tenantWide: {
      claim: (tenant, config, claim, replaces) => claimTenantWide(env, tenant, config, claim, replaces),
      reconcile: (tenant, shards, key) => reconcileClaim(env, tenant, shards, key),
    },
    rate: { take: () => parts.rate.take(loaded()), released: () => parts.rate.released() },
    waiters: parts.waiters,
    keeping: parts.keeping,
    metrics: { highRisk: (origin, tool, facts) => recordHighRisk(env, origin, tool, facts, ctx) },
    sessionActive: (run, now, idleMs) => recordSessionActivity(ctx.storage.kv, run, now, idleMs),
    createPending: parts.createPending,
  };
}

/**
 * The run's call rate and its lease of the tenant's, made on its first call; in memory, like any
 * rate limiter's buckets. When the run ends its lease goes back (its unused tokens to other runs).
 */
export class RunRate {
  readonly #env: Env;
  #gate: RunRateGate | null = null;
  #released: Promise<void> | null = null;

  constructor(env: Env) {
    this.#env = env;
  }

  take(run: RunMeta) {
    this.#gate ??= runRateGate(this.#env, run);
    return this.#gate.take();
  }

  /** The run ended: its lease is returned, for `ctx.waitUntil`; null when it took none. */
  release(): Promise<void> | null {
    const gate = this.#gate;
    if (!gate) return null;
    this.#released = gate.release().catch((error) => {
      // Not returned now, the lease's tokens come back when its term ends at the tenant's bucket.
      console.error("rate limiter unavailable", error);
    });
    return this.#released;
  }

  /** The lease's return, once the run ended; settled at once before. */
  async released(): Promise<void> {
    await this.#released;
  }
}
