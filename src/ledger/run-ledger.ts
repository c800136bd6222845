import { DurableObject } from "cloudflare:workers";
import type { ApprovalRecord, ApprovalSummary } from "../approvals/model";
import { notifyApproval } from "../approvals/notify";
import { policyVersion } from "../approvals/policy-version";
import { subjectsOf } from "../approvals/subjects";
import { loadConfig } from "../config/load";
import { newCallId } from "../core/ids";
import type { Env } from "../env";
import {
  type CallStep,
  decideApproval,
  endRun,
  joinedAnswer,
  settleCall,
  sweepApprovals,
  type Write,
} from "../pipeline/admit";
import { type DispatchPlan, dispatchCall, prepareAgentCall } from "../pipeline/run-call";
import { newRun, type RunMeta } from "../pipeline/run-state";
import { runStatus } from "../pipeline/run-status";
import { limiterOf, rateSettingsOf } from "../ratelimit/admission";
import { RunRateGate } from "../ratelimit/run-gate";
import { catalog } from "../tools";
import { type Envelope, failure } from "../wire/envelope";
import type { RunStatus } from "../wire/run-status";
import type { RunTrace } from "../wire/run-trace";
import type { TraceEntry } from "../wire/trace-entry";
import { ApprovalStore } from "./approval-store";
import { commitWrites, type DeferredAdmission, type LedgerStores, spendInMemory } from "./commit";
import { KeyStore } from "./key-store";
import type { CallInput, DecideInput, DecideResult, OpenRunInput } from "./ledger-api";
import { ResultStore } from "./result-store";
import { RunIndex } from "./run-index";
import { RunStore } from "./run-store";
import { ScenarioStore } from "./scenario-store";

/** Keys, results, approvals and trace outlive the run by at least this long. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * When the run's MCP session last made a request (epoch ms), in the object's key-value storage: a
 * session's bookkeeping, not part of the run's state the admission machine reasons about.
 */
export const SESSION_ACTIVITY_KEY = "mcp_session_last_active_at";

export type { CallInput, DecideInput, DecideResult, OpenRunInput };

type Send = Omit<DispatchPlan, "run" | "results" | "scenario" | "approval">;

/** How the call that sends a key's request answers the identical calls that joined it. */
interface Inflight {
  resolve: (envelope: Envelope) => void;
  reject: (error: unknown) => void;
}

/**
 * One agent run's single writer. Its decisions are the pure machine of `pipeline/admit.ts`; this
 * object loads the run before serving anything, reads what an event needs, applies the machine's
 * writes in one `transactionSync` (no await inside, so concurrent calls of a run can never both
 * spend the last unit of a budget or both reserve a key), keeps the requests in flight, and runs
 * the alarm that expires approvals and deletes the run after its retention.
 */
export class RunLedger extends DurableObject<Env> {
  readonly #stores: LedgerStores;
  readonly #results: ResultStore;
  readonly #scenario: ScenarioStore;
  #run: RunMeta | null = null;
  /** Upstream requests in flight, by idempotency key: identical concurrent calls share one. */
  readonly #inflight = new Map<string, Promise<Envelope>>();
  /** Reads admitted and not yet committed, by call digest, for the repeat breaker's count. */
  readonly #readsInFlight = new Map<string, number>();
  /** The run's call rate and its lease of the tenant's; in memory, like any rate limiter's buckets. */
  #gate: RunRateGate | null = null;
  /** What the tenant's directory has been told of this run, so it is told each new thing once. */
  readonly #index = new RunIndex();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    this.#stores = {
      run: new RunStore(sql),
      keys: new KeyStore(sql),
      approvals: new ApprovalStore(sql, () => this.#run),
    };
    this.#results = new ResultStore(sql);
    this.#scenario = new ScenarioStore(sql);
    // Nothing may be served before the schema is current and the run is loaded.
    void ctx.blockConcurrencyWhile(async () => {
      this.#stores.run.migrate();
      this.#run = this.#stores.run.readRun();
    });
  }

  async open(input: OpenRunInput): Promise<RunStatus> {
    if (this.#run) throw new Error("run already exists");
    const now = Date.now();
    const run = newRun(input, loadConfig(this.env).environment, await catalog.version(), now);
    this.ctx.storage.transactionSync(() => {
      this.#stores.run.insertRun(run);
      this.#scenario.insert(input.scenario ?? []);
    });
    this.#run = run;
    this.#tellDirectory();
    await this.#scheduleAlarm();
    return runStatus(run, now);
  }

  status(tenant: string): RunStatus | null {
    const run = this.#ownRun(tenant);
    return run ? runStatus(run, Date.now()) : null;
  }

  /** Ends the run: later calls are refused and its pending approvals expire, saying why. */
  async end(tenant: string): Promise<RunStatus | null> {
    const run = this.#ownRun(tenant);
    if (!run) return null;
    await this.#commit(() => endRun(run, this.#stores.approvals.pending(), Date.now()));
    return runStatus(this.#run ?? run, Date.now());
  }

  /**
   * An MCP session's request of this run: whether the session may continue, recording its activity
   * when it may. A run that is closed, past its deadline or idle longer than `idleMs` may not, and
   * the last two are ended here, so an abandoned session holds nothing open.
   */
  async touchSession(tenant: string, now: number, idleMs: number): Promise<boolean> {
    const run = this.#ownRun(tenant);
    if (!run || run.state === "closed") return false;
    const lastActive = this.ctx.storage.kv.get<number>(SESSION_ACTIVITY_KEY) ?? run.created_at;
    if (now >= run.deadline_at || now - lastActive > idleMs) {
      await this.#commit(() => endRun(run, this.#stores.approvals.pending(), now));
      return false;
    }
    this.ctx.storage.kv.put(SESSION_ACTIVITY_KEY, now);
    return true;
  }

  /** Named readTrace because `trace` is the tail-worker handler name, which RPC reserves. */
  readTrace(tenant: string): { run: RunStatus; entries: TraceEntry[] } | null {
    const run = this.#ownRun(tenant);
    return run ? { run: runStatus(run, Date.now()), entries: this.#stores.run.readTrace() } : null;
  }

  /**
   * One page of the trace: up to `limit` entries after the cursor (a sequence number), and the
   * cursor of the next page. One more entry is read than returned to know whether there is one.
   */
  readTracePage(tenant: string, cursor: number, limit: number): RunTrace | null {
    const run = this.#ownRun(tenant);
    if (!run) return null;
    const rows = this.#stores.run.readTracePage(cursor, limit + 1);
    const entries = rows.slice(0, limit);
    const last = entries.at(-1);
    return {
      run: runStatus(run, Date.now()),
      entries,
      next_cursor: rows.length > limit && last ? String(last.seq) : null,
    };
  }

  approval(tenant: string, approvalId: string): ApprovalRecord | null {
    return this.#ownRun(tenant) ? this.#stores.approvals.byId(approvalId) : null;
  }

  /** One page of a large result of this run; null when the handle is unknown or the run's data expired. */
  resultPage(tenant: string, handle: string, cursor: number) {
    return this.#ownRun(tenant) ? this.#results.page(handle, cursor) : null;
  }

  /**
   * Expires the approvals that can no longer execute (their window or the run's deadline passed,
   * the policy changed), then deletes the run's data once its retention has passed, and not a
   * moment before. One alarm serves both: it is set to whichever comes first.
   */
  override async alarm(): Promise<void> {
    // Read afresh: the alarm is the one event that may follow a change made below this object.
    const run = this.#stores.run.readRun();
    this.#run = run;
    if (!run) return;
    const now = Date.now();
    const policy = await this.#policyVersion(run);
    await this.#commit(() => sweepApprovals(run, this.#stores.approvals.pending(), now, policy));
    if (now >= this.#retainUntil(run)) {
      this.#run = null;
      await this.ctx.storage.deleteAll();
      return;
    }
    await this.#scheduleAlarm();
  }

  /** The whole tool-call pipeline for one dispatch of this run, from resolve to record. */
  async call(input: CallInput): Promise<Envelope> {
    const own = this.#ownRun(input.tenant);
    // The run's and the tenant's call rates first: a refused call is no dispatch and commits nothing.
    const limited = own ? await this.#rateGate(own).take() : null;
    if (limited) {
      const environment = loadConfig(this.env).environment;
      return failure({ call_id: input.call_id, environment, tool: input.request.tool }, limited);
    }
    const prepared = await prepareAgentCall(this.env, this.#ownRun(input.tenant), input);
    if (prepared.kind === "refused") return prepared.envelope;
    const { call } = prepared;
    const {
      result: next,
      changed,
      deferred,
    } = this.#admitStep(call.digest, () =>
      prepared.admit({
        run: this.#run as RunMeta,
        record: call.key ? this.#stores.keys.read(call.key, call.request) : null,
        approval: call.key ? this.#stores.approvals.byKey(call.key) : null,
        // Reads admitted but not yet committed count too: their trace entries are written with them.
        earlier_identical:
          this.#stores.run.countDigest(call.digest) + (this.#readsInFlight.get(call.digest) ?? 0),
        // Counted only when the call may open an approval: a read never needs the figure.
        open_approvals: call.prepared.approval.required ? this.#stores.approvals.countOpen(call.now) : 0,
        max_open_approvals: prepared.tenant.max_open_approvals,
        inflight: call.key !== null && this.#inflight.has(call.key),
      }),
    );
    // Registered in the same synchronous turn as the reservation: an identical call arriving while
    // this one awaits anything must find it in flight, never a "sending" key to send again.
    const settle = next.kind === "send" ? this.#markInflight(next.key) : null;
    const tool = prepared.tool;
    if (this.#index.learn(tool?.name ?? null, subjectsOf(call.prepared.args, tool?.sensitive_args))) {
      this.#tellDirectory();
    }
    await this.#publish(changed);
    switch (next.kind) {
      case "answer":
        return next.envelope;
      case "join": {
        const joined = joinedAnswer(
          this.#run as RunMeta,
          await (this.#inflight.get(next.key) as Promise<Envelope>),
          call.call_id,
          Date.now(),
        );
        await this.#commit(() => joined.writes);
        return joined.envelope;
      }
      case "send":
        return this.#send(
          settle,
          {
            callId: call.call_id,
            tool: prepared.tool,
            key: next.key,
            request: next.request,
            args: call.prepared.args ?? {},
            fault: input.fault ?? null,
          },
          deferred,
        );
    }
  }

  /**
   * Admits an agent's call. A call that reserves nothing (a read, a page of a stored result) commits
   * nothing yet: the calls it spends apply to the run in memory at once, so concurrent calls see the
   * budget spent, and its trace entry is written with its outcome, in one transaction. Everything
   * else (a write's key, an approval, a refusal, a replay) commits now, before anything leaves.
   * If the object restarts while a read is out, the read is simply not recorded: it changed nothing
   * upstream, and its caller, who got no answer, asks again.
   */
  #admitStep(
    digest: string,
    event: () => CallStep,
  ): { result: CallStep; changed: ApprovalSummary[]; deferred: DeferredAdmission | null } {
    const result = event();
    const spent =
      result.kind === "send" && result.key === null
        ? spendInMemory(this.#run as RunMeta, result.writes)
        : null;
    if (spent) {
      this.#run = spent;
      this.#readsInFlight.set(digest, (this.#readsInFlight.get(digest) ?? 0) + 1);
      return { result, changed: [], deferred: { writes: result.writes, digest } };
    }
    const { changed } = this.#commitStep(() => ({
      writes: [
        ...result.writes,
        // A key sent now spends its effect budget now, before the request leaves: pending approvals
        // that needed that budget expire in the same commit, not after the outcome (which a restart
        // mid-request would never reach).
        ...(result.kind === "send" && result.key !== null
          ? sweepApprovals(
              { ...(this.#run as RunMeta), counters: result.budget },
              this.#stores.approvals.pending(),
              Date.now(),
              null,
            )
          : []),
      ],
    }));
    return { result, changed, deferred: null };
  }

  /**
   * An operator's decision. Approving executes the call exactly once, through the same dispatch
   * path and stored request the agent's call would use; a second approval of the same request finds
   * it no longer pending and executes nothing.
   */
  async decide(input: DecideInput): Promise<DecideResult> {
    const run = this.#ownRun(input.tenant);
    if (!run) return { ok: false, code: "not_found", message: "No such approval.", approval: null };
    const policy = await this.#policyVersion(run);
    const callId = newCallId();
    const approvals = this.#stores.approvals;
    const { result: decided, changed } = this.#commitStep(() => {
      const approval = approvals.byId(input.approval_id);
      return decideApproval(
        this.#run as RunMeta,
        approval,
        approval ? this.#stores.keys.read(approval.idempotency_key, null) : null,
        approval ? catalog.find(run.namespace, approval.tool) : undefined,
        { ...input, call_id: callId, now: Date.now(), policy_version: policy },
        approvals.pending(),
      );
    });
    const settle = decided.kind === "send" ? this.#markInflight(decided.key) : null;
    await this.#publish(changed);
    const latest = () => approvals.byId(input.approval_id);
    if (decided.kind === "done") {
      return decided.refusal
        ? { ok: false, ...decided.refusal, approval: latest() }
        : { ok: true, approval: latest() as ApprovalRecord };
    }
    await this.#send(settle, {
      callId,
      tool: catalog.find(run.namespace, decided.tool) ?? null,
      key: decided.key,
      request: decided.request,
      args: (latest() as ApprovalRecord).args,
      fault: null,
    });
    return { ok: true, approval: latest() as ApprovalRecord };
  }

  /**
   * Makes the key's request visible to identical calls: they wait for its envelope, or for its
   * failure, which reaches them as an interrupted ledger (a resend is safe: the key is recorded).
   */
  #markInflight(key: string | null): Inflight {
    const inflight: Inflight = { resolve: () => {}, reject: () => {} };
    if (key !== null) {
      const shared = new Promise<Envelope>((resolve, reject) => Object.assign(inflight, { resolve, reject }));
      // Nobody may be waiting; an unobserved rejection must not count as an unhandled one.
      shared.catch(() => {});
      this.#inflight.set(key, shared);
    }
    return inflight;
  }

  /** Stages "dispatch" to "record" for a call that goes upstream (or to the run's own pages). */
  async #send(
    inflight: Inflight | null,
    plan: Send,
    deferred: DeferredAdmission | null = null,
  ): Promise<Envelope> {
    const { key } = plan;
    const approval = key ? this.#stores.approvals.byKey(key) : null;
    try {
      const dispatched = await dispatchCall(this.env, {
        ...plan,
        approval: approval
          ? { id: approval.id, state: approval.state, expires_at: approval.expires_at }
          : null,
        run: () => this.#run as RunMeta,
        results: this.#results,
        scenario: this.#scenario,
      });
      const { changed } = this.#commitStep(() => {
        dispatched.record();
        const { envelope, completion, taint } = dispatched;
        const run = this.#run as RunMeta;
        return {
          writes: [
            // A read's admission, committed with its outcome. Counters are written as the run has
            // them now: later calls may have spent more since this one was admitted.
            ...(deferred
              ? [
                  ...deferred.writes.filter((write) => write.kind !== "counters"),
                  { kind: "counters" as const, counters: run.counters },
                ]
              : []),
            ...settleCall(
              key,
              key ? this.#stores.approvals.byKey(key) : null,
              envelope,
              completion,
              plan.callId,
              taint,
            ),
            // An execution spends a budget other pending approvals may have counted on.
            ...(key ? sweepApprovals(run, this.#stores.approvals.pending(), Date.now(), null) : []),
          ],
        };
      });
      // The outcome is durable now: identical calls get it without waiting for the directory.
      inflight?.resolve(dispatched.envelope);
      await this.#publish(changed);
      return dispatched.envelope;
    } catch (error) {
      inflight?.reject(error);
      throw error;
    } finally {
      if (key !== null) this.#inflight.delete(key);
      if (deferred) this.#settleRead(deferred.digest);
    }
  }

  #settleRead(digest: string): void {
    const left = (this.#readsInFlight.get(digest) ?? 1) - 1;
    if (left > 0) this.#readsInFlight.set(digest, left);
    else this.#readsInFlight.delete(digest);
  }

  /** Runs one event of the machine and commits its writes in one synchronous transaction. */
  #commitStep<T extends { writes: Write[] }>(event: () => T): { result: T; changed: ApprovalSummary[] } {
    return this.ctx.storage.transactionSync(() => {
      const result = event();
      const committed = commitWrites(this.#stores, this.#run as RunMeta, result.writes);
      this.#run = committed.run;
      return { result, changed: committed.changed };
    });
  }

  async #commit(writes: (run: RunMeta) => Write[]): Promise<void> {
    await this.#publish(this.#commitStep(() => ({ writes: writes(this.#run as RunMeta) })).changed);
    // Every way a run ends (end, an idle or late session, the alarm past the deadline) commits here.
    const run = this.#run;
    if (run && this.#index.learnEnded(run, Date.now())) this.#tellDirectory();
  }

  #retainUntil(run: RunMeta): number {
    return (run.ended_at ?? run.deadline_at) + RETENTION_MS;
  }

  async #scheduleAlarm(): Promise<void> {
    const run = this.#run;
    if (!run) return;
    const nextExpiry = this.#stores.approvals.nextExpiry();
    const retention = this.#retainUntil(run);
    await this.ctx.storage.setAlarm(nextExpiry === null ? retention : Math.min(nextExpiry, retention));
  }

  #policyVersion(run: RunMeta): Promise<string> {
    const tenant = loadConfig(this.env).tenants[run.tenant];
    if (!tenant) throw new Error(`tenant ${run.tenant} is no longer configured`);
    return policyVersion(run.catalog_version, tenant);
  }

  /**
   * Writes approval changes through to the tenant's directory, where operators list them, and
   * announces each on the approval webhook. Every change passes here exactly once (each state is
   * reached once), so each event is sent once: created, decided, executed, expired.
   */
  async #publish(summaries: ApprovalSummary[]): Promise<void> {
    const run = this.#run;
    if (!run || summaries.length === 0) return;
    for (const summary of summaries) this.ctx.waitUntil(notifyApproval(this.env, run.tenant, summary));
    const directory = this.env.APPROVAL_DIRECTORY.get(this.env.APPROVAL_DIRECTORY.idFromName(run.tenant));
    for (const summary of summaries) await directory.upsert(summary, run.tenant);
    await this.#scheduleAlarm();
  }

  /**
   * Writes the run through to the tenant's directory, where operators list and search runs. Never
   * awaited: the agent's answer does not wait for the index, which only adds what it is told, so a
   * late or repeated write is harmless.
   */
  #tellDirectory(): void {
    const run = this.#run;
    if (!run) return;
    const directory = this.env.APPROVAL_DIRECTORY.get(this.env.APPROVAL_DIRECTORY.idFromName(run.tenant));
    this.ctx.waitUntil(
      directory.indexRun(this.#index.entry(run, Date.now())).catch((error: unknown) => {
        console.error("run index write failed", error);
      }),
    );
  }

  #rateGate(run: RunMeta): RunRateGate {
    if (!this.#gate) {
      this.#gate = new RunRateGate(
        run.run_id,
        () => rateSettingsOf(this.env, run.tenant),
        () => limiterOf(this.env, run.tenant),
      );
    }
    return this.#gate;
  }

  #ownRun(tenant: string): RunMeta | null {
    const run = this.#run;
    return run && run.tenant === tenant ? run : null;
  }
}
