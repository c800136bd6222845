import { DurableObject } from "cloudflare:workers";
import type { ApprovalRecord, ApprovalSummary } from "../approvals/model";
import { loadConfig } from "../config/load";
import type { EffectFate } from "../effects/fate";
import type { Env } from "../env";
import type { RunToolSet } from "../machine/grants";
import { newRun, type RunMeta } from "../machine/run-state";
import { runStatus } from "../machine/run-status";
import type { Write } from "../machine/writes";
import type { Envelope } from "../wire/envelope";
import type { RunStatus } from "../wire/run-status";
import type { RunTrace } from "../wire/run-trace";
import type { TraceEntry } from "../wire/trace-entry";
import { agentCall } from "../workflow/agent-call";
import { decide, withdraw } from "../workflow/decision";
import type { RunPorts } from "../workflow/ports";
import { end, pastPendingDeadline, reopened, ringAlarm, touchSession } from "../workflow/run-lifecycle";
import { type ShownTools, shownTools, toolSetOf, toolsToAdd } from "../workflow/run-tools";
import { effectFate } from "../workflow/tenant-wide";
import { ApprovalWaiters } from "./approval-waiters";
import * as tables from "./commit";
import { KeysDeciding, KeysInFlight } from "./key-store";
import type * as api from "./ledger-api";
import { ResultStore } from "./result-store";
import { retire, retiredRun } from "./retired-run";
import { RunDirectory } from "./run-index";
import { RunRate, runPorts } from "./run-ports";
import { RunPublisher } from "./run-publisher";
import { ScenarioStore } from "./scenario-store";

export { RETENTION_MS } from "../machine/run-events";

/**
 * One agent run's single writer. It drives without deciding: its workflows (an agent's call, an
 * operator's decision, the run's lifecycle and the alarm's work) are `workflow/`, reached through
 * narrow ports (`run-ports.ts`), and their decisions are the pure machine of `machine/`. This
 * object loads the run, keeps its schema, applies a step's writes in one `transactionSync` (no
 * await inside, so concurrent calls can never both spend a budget's last unit or both reserve a
 * key), forgets its memory when a commit fails, and takes the alarm.
 */
export class RunLedger extends DurableObject<Env> {
  readonly #stores: tables.LedgerStores;
  readonly #keeping: { results: ResultStore; scenario: ScenarioStore };
  #run: RunMeta | null = null;
  /**
   * Whether storage holds the schema, brought up to date: read once when the object wakes, true once
   * something is stored, false again when retention deleted everything. A fresh object has none.
   */
  #schemaHere = false;
  readonly #inflight = new KeysInFlight();
  /** Keys between their tenant-wide claim and the admission's commit, in this instance. */
  readonly #deciding = new KeysDeciding();
  readonly #rate: RunRate;
  readonly #directory: RunDirectory;
  readonly #publisher: RunPublisher;
  /** Calls waiting for a pending approval's decision (`Prefer: wait`), in this instance. */
  readonly #waiters = new ApprovalWaiters();
  readonly #ports: RunPorts;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    this.#stores = tables.ledgerStores(sql, () => this.#run);
    this.#directory = new RunDirectory(env, this.#stores.outbox, (told) => this.#stores.run.writeTold(told));
    this.#keeping = { results: new ResultStore(sql), scenario: new ScenarioStore(sql) };
    this.#publisher = new RunPublisher(env, ctx, {
      stores: this.#stores,
      directory: this.#directory,
      run: () => this.#run,
      sendsInFlight: () => this.#inflight.keys().size,
    });
    this.#rate = new RunRate(env);
    this.#ports = runPorts({
      ...{ env, ctx, stores: this.#stores, keeping: this.#keeping, inflight: this.#inflight },
      ...{ deciding: this.#deciding, deferredReads: new tables.DeferredReads(), rate: this.#rate },
      ...{ publisher: this.#publisher, directory: this.#directory, waiters: this.#waiters },
      run: () => this.#run,
      spent: (run) => {
        this.#run = run;
      },
      commit: (event, republish) => this.#commitStep(event, republish),
      createPending: (tenant, pending) => this.#createPending(tenant, pending),
    });
    // Nothing may be served before the schema is current and the run is loaded. A fresh object
    // stays empty until something is written here (`#schema`): asking after a run that was never
    // opened (an MCP session's reserved run before its first call) leaves no storage behind.
    void ctx.blockConcurrencyWhile(async () => {
      // Whether a schema is here and its version, in one statement.
      this.#schemaHere = this.#stores.run.migrateExisting();
      if (!this.#schemaHere) return;
      // The run and what the stores keep in memory of their tables, in one statement.
      const woken = this.#stores.run.readRunAtWake();
      if (woken) {
        this.#stores.outbox.known(woken.memory.outboxNext);
        this.#stores.approvals.known(woken.memory.approvals);
        this.#keeping.scenario.known(woken.memory.scenarioLeft);
        this.#directory.told(woken.memory.told);
      }
      this.#run = woken?.run ?? null;
      // What a crash left undelivered goes out as soon as the object is up (the alarm stored with it
      // would deliver it too); not awaited, so requests are served meanwhile.
      if (this.#run && this.#publisher.owesDirectory()) ctx.waitUntil(this.#publisher.deliver());
    });
  }

  async open(input: api.OpenRunInput): Promise<api.OpenRunAnswer> {
    // Awaited before the run is looked at: between the check and the insert nothing may interleave,
    // so concurrent opens of one task's run find one run.
    const shown = await shownTools(input);
    if (this.#run) return reopened(this.#run, this.#stores.run.task(), input, Date.now());
    const retired = this.#schemaHere ? null : retiredRun(this.ctx.storage.kv);
    if (retired) return { kind: "retired", run_id: retired.run_id, deleted_at: retired.deleted_at };
    const now = Date.now();
    const run = this.#create(input, shown, now, now);
    await this.#publisher.scheduleAlarm();
    return { kind: "opened", status: runStatus(run, now) };
  }

  /**
   * Creates the run an open stored nothing of (`PendingOpen`), on its first request, as that open
   * would have (its clock, the catalog it showed); past its deadline nothing is created, and its
   * requests find no run. Whether the run is here now.
   */
  async openPending(tenant: string, pending: api.PendingOpen): Promise<boolean> {
    if (this.#run) return this.#run.tenant === tenant;
    if (pastPendingDeadline(pending, Date.now())) return false;
    await this.#createPending(tenant, pending);
    return true;
  }

  /** Creates the run of a pending open its caller found absent and not past its deadline, and sets its alarm. */
  async #createPending(tenant: string, pending: api.PendingOpen): Promise<void> {
    const shown = await shownTools(pending, pending);
    // Another first request of the run may have created it while the shown tools were computed.
    if (this.#run) return;
    this.#create({ tenant, ...pending }, shown, pending.opened_at, Date.now());
    await this.#publisher.scheduleAlarm();
  }

  /**
   * Stores a new run, its task, its scenario and its directory entry in one commit. The alarm is
   * the caller's to set, right after.
   */
  #create(input: api.OpenRunInput, shown: ShownTools, openedAt: number, now: number): RunMeta {
    // The schema is created in an object that has none (a fresh one, or one retention emptied); a
    // woken object's was brought up to date when it woke.
    if (!this.#schemaHere) this.#stores.run.create();
    this.#schemaHere = true;
    const run = newRun(input, loadConfig(this.env).environment, shown, openedAt);
    // A new run's outbox holds nothing: its entry is written without looking for an older one, and
    // when the alarm must ring for it is known without a statement.
    this.#stores.outbox.opened();
    try {
      this.ctx.storage.transactionSync(() => {
        this.#stores.run.insertRun(run);
        if (input.task) this.#stores.run.insertTask(input.task);
        this.#keeping.scenario.insert(input.scenario ?? []);
        this.#directory.enqueueRun(run, now, true);
      });
    } catch (error) {
      this.#forgetMemory();
      throw error;
    }
    this.#run = run;
    this.#stores.approvals.opened();
    // The run's entry waits in the outbox for the run's first call: that call's commit rewrites it
    // (the tool it named, its subjects), and one delivery carries both. The alarm, stored with the
    // open, delivers it to a run not called within OPENED_ENTRY_WAIT_MS (run-index.ts).
    return run;
  }

  status(tenant: string): RunStatus | null {
    const run = this.#ownRun(tenant);
    return run ? runStatus(run, Date.now()) : null;
  }

  /** The run's tool set (opened subset, added tools, reach), for its spec export. */
  toolSet(tenant: string): RunToolSet | null {
    const run = this.#ownRun(tenant);
    return run ? toolSetOf(run) : null;
  }

  /** Adds granted tools to an open run, by name (`workflow/run-tools.ts`). */
  addTools(tenant: string, asked: string[]): api.AddToolsAnswer {
    const plan = toolsToAdd(this.env, this.#ownRun(tenant), asked);
    if (plan.kind !== "add") return plan;
    this.ctx.storage.transactionSync(() => this.#stores.run.writeAddedTools(plan.added));
    this.#run = { ...plan.run, added_tools: plan.added };
    return { kind: "added", tool_set: toolSetOf(this.#run) };
  }

  /** Ends the run: later calls are refused and its pending approvals expire, saying why. */
  async end(tenant: string): Promise<RunStatus | null> {
    const run = this.#ownRun(tenant);
    if (!run) return null;
    await end(this.#ports, run);
    return runStatus(this.#run ?? run, Date.now());
  }

  /** An MCP session's request (`workflow/run-lifecycle.ts`); "none" when no run of the tenant is here. */
  async touchSession(tenant: string, now: number, idleMs: number): Promise<api.SessionState> {
    const run = this.#ownRun(tenant);
    return run ? touchSession(this.#ports, run, now, idleMs) : "none";
  }

  /** An MCP session's tool call: only a live session's call is admitted; else the answer says why not. */
  async sessionCall(input: api.CallInput, idleMs: number): Promise<api.SessionCallAnswer> {
    const run = this.#ownRun(input.tenant);
    const session = run ? await touchSession(this.#ports, run, Date.now(), idleMs) : "none";
    return session === "live" ? { session, envelope: await agentCall(this.#ports, input) } : { session };
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

  /** The approval with its call's key state and stored answer, for a task that waits on it. */
  approvalWithCall(tenant: string, approvalId: string): api.ApprovalWithCall | null {
    const approval = this.approval(tenant, approvalId);
    if (!approval) return null;
    const record = this.#stores.keys.read(approval.idempotency_key, null);
    return { approval, call: record ? { state: record.state, envelope: record.envelope } : null };
  }

  /** One page of a large result of this run; null when the handle is unknown or the run's data expired. */
  resultPage(tenant: string, handle: string, cursor: number) {
    return this.#ownRun(tenant) ? this.#keeping.results.page(handle, cursor) : null;
  }

  /**
   * The alarm's entry: an object retention emptied keeps only its run's mark, until no shard holds
   * the run's effects; a run's alarm does its work (`workflow/run-lifecycle.ts`) and, once its
   * retention has passed, deletes everything. One alarm serves all: it is set to whichever comes first.
   */
  override async alarm(): Promise<void> {
    this.#publisher.alarmRang();
    if (!this.#schemaHere) {
      const retired = retiredRun(this.ctx.storage.kv);
      if (retired && Date.now() >= retired.until) await this.ctx.storage.deleteAll();
      return;
    }
    // Read afresh: the alarm is the one event that may follow a change made below this object.
    this.#forgetMemory();
    const run = this.#stores.run.readRun();
    this.#run = run;
    if (!run) return;
    const now = Date.now();
    if ((await ringAlarm(this.#ports, run)) === "retained") return this.#publisher.scheduleAlarm();
    this.#run = null;
    // The input gate holds every other event until the deletion is done: none sees it half done.
    await this.ctx.storage.deleteAll();
    this.#schemaHere = false;
    this.#forgetMemory();
    this.#stores.outbox.storageDeleted();
    await this.ctx.storage.setAlarm(retire(this.ctx.storage.kv, run, now).until);
  }

  /** One tool call of this run, stage by stage: `workflow/agent-call.ts`. */
  call(input: api.CallInput): Promise<Envelope> {
    return agentCall(this.#ports, input);
  }

  /** What became of a key a tenant shard holds a claim of (its reconciliation asks). */
  effectFate(tenant: string, key: string): EffectFate | "deciding" {
    return effectFate(this.#ports, tenant, key);
  }

  /** An operator's decision (`workflow/decision.ts`). */
  async decide(input: api.DecideInput): Promise<api.DecideResult> {
    const run = this.#ownRun(input.tenant);
    if (!run) return { ok: false, code: "not_found", message: "No such approval.", approval: null };
    return decide(this.#ports, run, input);
  }

  /** The agent withdraws its approval request (an MCP client cancelled the task waiting for it). */
  async withdrawApproval(
    tenant: string,
    approvalId: string,
    reason: string | null,
  ): Promise<ApprovalRecord | null> {
    return this.#ownRun(tenant) ? withdraw(this.#ports, approvalId, reason) : null;
  }

  /** Runs one event of the machine and commits its writes in one synchronous transaction. */
  #commitStep<T extends { writes: Write[] }>(
    event: () => T,
    republish: readonly string[] = [],
  ): { result: T; changed: ApprovalSummary[] } {
    const wasOpen = this.#run !== null && this.#run.state !== "closed";
    let committed: { result: T; changed: ApprovalSummary[] };
    try {
      committed = this.ctx.storage.transactionSync(() => {
        // What the last delivery acknowledged is deleted with this commit, not in one of its own.
        this.#stores.outbox.deleteAcknowledged();
        const result = event();
        const committed = tables.commitWrites(this.#stores, this.#loaded(), result.writes, republish);
        // Every way a run ends (end, an idle or late session, the alarm past the deadline) commits here.
        this.#directory.enqueueRun(committed.run, Date.now());
        this.#run = committed.run;
        return { result, changed: committed.changed };
      });
    } catch (error) {
      // The counts moved with writes that were rolled back: read them again from storage.
      this.#forgetMemory();
      throw error;
    }
    this.#publisher.guardDelivery();
    // A run that has ended gives its lease of the tenant's tokens back (its unused ones to other runs).
    const released = wasOpen && this.#run?.state === "closed" ? this.#rate.release() : null;
    if (released) this.ctx.waitUntil(released);
    // A call waiting for one of these approvals asks again now.
    for (const summary of committed.changed) this.#waiters.wake(summary.id);
    return committed;
  }

  /**
   * Drops what the stores keep in memory of their tables (repeat counts, approval counts, resource
   * versions): after a failed commit, or when storage may have changed below this object.
   */
  #forgetMemory(): void {
    this.#stores.run.forget();
    this.#stores.approvals.forget();
    this.#keeping.results.forget();
    this.#stores.outbox.forget();
    this.#stores.keys.forget();
    this.#stores.claims.forget();
  }

  /** The run this object serves; every event but `open` and the alarm runs on a loaded one. */
  #loaded(): RunMeta {
    if (!this.#run) throw new Error("the run ledger has no run loaded");
    return this.#run;
  }

  #ownRun(tenant: string): RunMeta | null {
    return this.#run?.tenant === tenant ? this.#run : null;
  }
}
