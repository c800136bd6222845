import { DurableObject } from "cloudflare:workers";
import { type ApprovalRecord, type ApprovalSummary, approvalBlock } from "../approvals/model";
import { loadConfig } from "../config/load";
import { newCallId } from "../core/ids";
import type { Env } from "../env";
import { admitCall } from "../pipeline/admit";
import { decideApproval } from "../pipeline/decide";
import { type ExecutionPlan, executeCall, type RunKeeping } from "../pipeline/execute";
import { currentPolicyVersion, intakeCall, type TakenCall } from "../pipeline/intake";
import {
  alarmRings,
  endRun,
  nextAlarmAt,
  RECONCILE_AFTER_MS,
  reconcileInterrupted,
  retainUntil,
} from "../pipeline/run-events";
import { newRun, type RunMeta } from "../pipeline/run-state";
import { runStatus } from "../pipeline/run-status";
import { joinedAnswer, settleSend } from "../pipeline/settle";
import type { Write } from "../pipeline/writes";
import { limiterOf, rateSettingsOf } from "../ratelimit/admission";
import { RunRateGate } from "../ratelimit/run-gate";
import { catalog } from "../tools";
import { type Envelope, failure } from "../wire/envelope";
import type { RunStatus } from "../wire/run-status";
import type { RunTrace } from "../wire/run-trace";
import type { TraceEntry } from "../wire/trace-entry";
import { announceApprovals } from "./approval-store";
import * as tables from "./commit";
import { type Inflight, KeysInFlight } from "./key-store";
import type { CallInput, DecideInput, DecideResult, OpenRunInput } from "./ledger-api";
import { ResultStore } from "./result-store";
import { RunDirectory } from "./run-index";
import { ScenarioStore } from "./scenario-store";

export { RETENTION_MS } from "../pipeline/run-events";

/**
 * When the run's MCP session last made a request (epoch ms), in the object's key-value storage: a
 * session's bookkeeping, not part of the run's state the admission machine reasons about.
 */
export const SESSION_ACTIVITY_KEY = "mcp_session_last_active_at";

/**
 * One agent run's single writer. Its decisions are the pure machine of `pipeline/`, which returns
 * every write; this object loads the run, reads what an event needs, applies the machine's writes
 * in one `transactionSync` (no await inside, so concurrent calls of a run can never both spend the
 * last unit of a budget or both reserve a key), keeps the requests in flight, publishes approval
 * changes, and runs the alarm that expires approvals and deletes the run after its retention.
 */
export class RunLedger extends DurableObject<Env> {
  readonly #stores: tables.LedgerStores;
  readonly #keeping: RunKeeping;
  #run: RunMeta | null = null;
  readonly #inflight = new KeysInFlight();
  readonly #deferredReads = new tables.DeferredReads();
  /** The run's call rate and its lease of the tenant's; in memory, like any rate limiter's buckets. */
  #gate: RunRateGate | null = null;
  readonly #directory: RunDirectory;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    this.#stores = tables.ledgerStores(sql, () => this.#run);
    this.#directory = new RunDirectory(env, this.#stores.outbox);
    this.#keeping = { results: new ResultStore(sql), scenario: new ScenarioStore(sql) };
    // Nothing may be served before the schema is current and the run is loaded.
    void ctx.blockConcurrencyWhile(async () => {
      this.#stores.run.migrate();
      this.#run = this.#stores.run.readRun();
      // What a crash left undelivered goes out as soon as the object is up (the alarm stored with it
      // would deliver it too); not awaited, so requests are served meanwhile.
      if (this.#run && this.#directory.nextAttemptAt() !== null) ctx.waitUntil(this.#deliver());
    });
  }

  async open(input: OpenRunInput): Promise<RunStatus> {
    if (this.#run) throw new Error("run already exists");
    const now = Date.now();
    const run = newRun(input, loadConfig(this.env).environment, await catalog.version(), now);
    this.ctx.storage.transactionSync(() => {
      this.#stores.run.insertRun(run);
      this.#keeping.scenario.insert(input.scenario ?? []);
      this.#directory.enqueueRun(run, now, true);
    });
    this.#run = run;
    await this.#scheduleAlarm();
    // The run's entry is not waited for: the agent's answer does not depend on the operators' index.
    this.ctx.waitUntil(this.#deliver());
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
   * An MCP session's request: whether it may continue, recording its activity when it may. A run
   * past its deadline or idle longer than `idleMs` is ended here, so an abandoned session holds
   * nothing open; a closed one just refuses.
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

  /** One page of the trace: up to `limit` entries after the cursor (a sequence number). */
  readTracePage(tenant: string, cursor: number, limit: number): RunTrace | null {
    const run = this.#ownRun(tenant);
    return run ? { run: runStatus(run, Date.now()), ...this.#stores.run.readTracePage(cursor, limit) } : null;
  }

  approval(tenant: string, approvalId: string): ApprovalRecord | null {
    return this.#ownRun(tenant) ? this.#stores.approvals.byId(approvalId) : null;
  }

  /** One page of a large result of this run; null when the handle is unknown or the run's data expired. */
  resultPage(tenant: string, handle: string, cursor: number) {
    return this.#ownRun(tenant) ? this.#keeping.results.page(handle, cursor) : null;
  }

  /**
   * Expires the approvals that can no longer execute, then deletes the run's data once its retention
   * has passed, and not a moment before. One alarm serves both: it is set to whichever comes first.
   */
  override async alarm(): Promise<void> {
    // Read afresh: the alarm is the one event that may follow a change made below this object.
    const run = this.#stores.run.readRun();
    this.#run = run;
    if (!run) return;
    const now = Date.now();
    const policy = await currentPolicyVersion(this.env, run);
    // Sends a restart cut off (left "sending", their trace entries open) settle in doubt here.
    await this.#commit(() =>
      reconcileInterrupted(tables.interruptedView(this.#stores, run, this.#inflight.keys()), now),
    );
    await this.#commit(() => alarmRings(run, this.#stores.approvals.pending(), now, policy));
    // Whatever the directory is still owed, retried here (the alarm rings for it) until retention ends.
    await this.#directory.deliver(run.tenant);
    if (now >= retainUntil(run)) {
      this.#run = null;
      await this.ctx.storage.deleteAll();
      return;
    }
    await this.#scheduleAlarm();
  }

  /**
   * One tool call of this run, stage by stage: the run's call rate; intake (the run and its catalog,
   * then resolve → validate → policy, the digest, the key and the request: `pipeline/intake.ts`);
   * admit (`pipeline/admit.ts`, committed here); then an answer, a join of the identical call in
   * flight, or execute (dispatch → classify → validate the output → shape → record:
   * `pipeline/execute.ts`) and settle (`pipeline/settle.ts`, committed here).
   */
  async call(input: CallInput): Promise<Envelope> {
    const limited = await this.#rateLimited(input);
    if (limited) return limited;
    const taken = await intakeCall(this.env, this.#ownRun(input.tenant), input);
    if (taken.kind === "refused") return taken.envelope;
    const { call } = taken;
    const { step, inflight, admission } = await this.#admit(taken);
    switch (step.kind) {
      case "answer":
        return step.envelope;
      case "join":
        return this.#join(step.key, call.call_id);
      case "send": {
        const { tool, args, key, request } = step;
        const fault = input.fault ?? null;
        return this.#execute(inflight, { callId: call.call_id, tool, key, request, args, fault }, admission);
      }
    }
  }

  /** The run's and the tenant's call rates: a refused call is no dispatch and commits nothing. */
  async #rateLimited(input: CallInput): Promise<Envelope | null> {
    const run = this.#ownRun(input.tenant);
    if (!run) return null;
    this.#gate ??= new RunRateGate(
      run.run_id,
      () => rateSettingsOf(this.env, run.tenant),
      () => limiterOf(this.env, run.tenant),
    );
    const limited = await this.#gate.take();
    if (!limited) return null;
    const environment = loadConfig(this.env).environment;
    return failure({ call_id: input.call_id, environment, tool: input.request.tool }, limited);
  }

  /**
   * Stage "admit". A read's admission waits in memory to commit with its outcome (see
   * `spendInMemory`); everything else (a key, an approval, a refusal, a replay) commits now, before
   * anything leaves.
   */
  async #admit({ call, tenant }: Extract<TakenCall, { kind: "ready" }>) {
    const step = admitCall(
      tables.callView(this.#stores, this.#loaded(), call, {
        inflight: this.#inflight.has(call.key),
        uncommittedReads: this.#deferredReads.count(call.digest),
        maxOpenApprovals: tenant.max_open_approvals,
      }),
      call,
    );
    // Learned before the commit, so the run's entry, if it has news, is written in it (a read's, in
    // the commit of its outcome).
    this.#directory.learnCall(call.prepared.tool, call.prepared.args);
    const spent =
      step.kind === "send" && step.key === null ? tables.spendInMemory(this.#loaded(), step.writes) : null;
    if (spent) this.#run = spent;
    const admission = spent ? this.#deferredReads.hold(call.digest, step.writes) : null;
    const { changed } = spent ? { changed: [] } : this.#commitStep(() => step);
    // Registered in the same synchronous turn as the reservation: an identical call arriving while
    // this one awaits anything must find it in flight, never a "sending" key to send again.
    const inflight = step.kind === "send" ? this.#inflight.mark(step.key) : null;
    // A keyed send rings the alarm after it, so a restart mid-send is still reconciled.
    if (step.kind === "send" && step.key !== null) await this.#scheduleAlarm();
    await this.#publish(changed);
    return { step, inflight, admission };
  }

  /** An identical call in flight answers this one too, once it has its envelope. */
  async #join(key: string, callId: string): Promise<Envelope> {
    const envelope = await this.#inflight.join(key);
    const joined = joinedAnswer(this.#loaded(), envelope, callId, Date.now());
    await this.#commit(() => joined.writes);
    return joined.envelope;
  }

  /**
   * An operator's decision. Approving executes the call exactly once, through the same dispatch
   * path and stored request the agent's call would use; a second approval of the same request finds
   * it no longer pending and executes nothing.
   */
  async decide(input: DecideInput): Promise<DecideResult> {
    const run = this.#ownRun(input.tenant);
    if (!run) return { ok: false, code: "not_found", message: "No such approval.", approval: null };
    const policy = await currentPolicyVersion(this.env, run);
    const callId = newCallId();
    // The decided approval goes to the directory again whatever the decision: a refusal means the
    // operator decided on a copy the ledger had left behind, and their list heals from this.
    const { result: decided, changed } = this.#commitStep(
      () =>
        decideApproval(tables.decisionView(this.#stores, this.#loaded(), input.approval_id), {
          ...input,
          call_id: callId,
          now: Date.now(),
          policy_version: policy,
        }),
      [input.approval_id],
    );
    const inflight = decided.kind === "send" ? this.#inflight.mark(decided.key) : null;
    if (decided.kind === "send") await this.#scheduleAlarm();
    await this.#publish(changed, true);
    if (decided.kind === "done" && decided.refusal) {
      const approval = this.#stores.approvals.byId(input.approval_id);
      return { ok: false, ...decided.refusal, approval };
    }
    if (decided.kind === "send") {
      const { key, request, tool, args } = decided;
      await this.#execute(inflight, { callId, tool, key, request, args, fault: null });
    }
    return { ok: true, approval: this.#decided(input.approval_id) };
  }

  /** An approval a decision just found, as it is now. */
  #decided(approvalId: string): ApprovalRecord {
    const approval = this.#stores.approvals.byId(approvalId);
    if (!approval) throw new Error(`approval ${approvalId} vanished while it was decided`);
    return approval;
  }

  /** Stages "execute" and "settle" for a call the machine said to send. */
  async #execute(
    inflight: Inflight | null,
    send: Omit<ExecutionPlan, "run" | "keeping" | "approval">,
    admission: tables.DeferredAdmission | null = null,
  ): Promise<Envelope> {
    const { key } = send;
    const approval = key ? this.#stores.approvals.byKey(key) : null;
    try {
      const executed = await executeCall(this.env, {
        ...send,
        approval: approval ? approvalBlock(approval) : null,
        run: () => this.#loaded(),
        keeping: this.#keeping,
      });
      const { result: settled, changed } = this.#commitStep(() => {
        executed.record();
        return settleSend({
          ...tables.settlementView(this.#stores, this.#loaded(), key),
          call_id: send.callId,
          admission: admission?.writes ?? null,
          envelope: executed.envelope,
          completion: executed.completion,
          taint: executed.taint,
          now: Date.now(),
        });
      });
      // The outcome is durable now: identical calls get it without waiting for the directory.
      inflight?.resolve(settled.envelope);
      await this.#publish(changed);
      return settled.envelope;
    } catch (error) {
      inflight?.reject(error);
      throw error;
    } finally {
      this.#inflight.done(key);
      if (admission) this.#deferredReads.release(admission);
    }
  }

  /** Runs one event of the machine and commits its writes in one synchronous transaction. */
  #commitStep<T extends { writes: Write[] }>(
    event: () => T,
    republish: readonly string[] = [],
  ): { result: T; changed: ApprovalSummary[] } {
    const committed = this.ctx.storage.transactionSync(() => {
      const result = event();
      const committed = tables.commitWrites(this.#stores, this.#loaded(), result.writes, republish);
      // Every way a run ends (end, an idle or late session, the alarm past the deadline) commits here.
      this.#directory.enqueueRun(committed.run, Date.now());
      this.#run = committed.run;
      return { result, changed: committed.changed };
    });
    // In the commit's own turn, so stored with it: a crash before the delivery still leaves an
    // alarm that delivers what the commit owes the directory.
    if (this.#directory.nextAttemptAt() !== null) this.ctx.waitUntil(this.#scheduleAlarm());
    return committed;
  }

  /**
   * The run's own events (its end, the alarm) and a joined call's copy: their delivery is waited
   * for, so a run's end is in the operators' list when the answer arrives.
   */
  async #commit(writes: () => Write[]): Promise<void> {
    await this.#publish(this.#commitStep(() => ({ writes: writes() })).changed, true);
  }

  /** The run this object serves; every event but `open` and the alarm runs on a loaded one. */
  #loaded(): RunMeta {
    if (!this.#run) throw new Error("the run ledger has no run loaded");
    return this.#run;
  }

  async #scheduleAlarm(): Promise<void> {
    if (!this.#run) return;
    const reconcileAt = this.#inflight.keys().size > 0 ? Date.now() + RECONCILE_AFTER_MS : null;
    const due = nextAlarmAt(this.#run, this.#stores.approvals.nextExpiry(), reconcileAt);
    await this.ctx.storage.setAlarm(Math.min(due, this.#directory.nextAttemptAt() ?? due));
  }

  /**
   * After a commit: announces its approval changes on the webhook and delivers what the commit
   * wrote to the outbox. An approval change (or a republished approval) is waited for, so the
   * operators' list shows it when the answer arrives; a run entry alone is delivered in the background.
   */
  async #publish(summaries: ApprovalSummary[], awaitDelivery = summaries.length > 0): Promise<void> {
    const run = this.#run;
    if (!run) return;
    announceApprovals(this.env, (promise) => this.ctx.waitUntil(promise), run.tenant, summaries);
    if (this.#directory.nextAttemptAt() === null) return;
    if (awaitDelivery) await this.#deliver();
    else this.ctx.waitUntil(this.#deliver());
  }

  /** Delivers the outbox to the tenant's directory, then sets the alarm for what is left of it. */
  async #deliver(): Promise<void> {
    const run = this.#run;
    if (!run) return;
    await this.#directory.deliver(run.tenant);
    await this.#scheduleAlarm();
  }

  #ownRun(tenant: string): RunMeta | null {
    return this.#run?.tenant === tenant ? this.#run : null;
  }
}
