import { DurableObject } from "cloudflare:workers";
import { holdsRole } from "../approvals/approvers";
import { type ApprovalRecord, type ApprovalSummary, approvalBlock } from "../approvals/model";
import { resolveSubset, toolRef } from "../catalog/subset";
import { loadConfig } from "../config/load";
import { differingFields } from "../core/canonical-json";
import { newCallId } from "../core/ids";
import { claimOf } from "../effects/claim";
import { type EffectFate, fateOfKey } from "../effects/fate";
import type { TenantCheck } from "../effects/reasons";
import type { Env } from "../env";
import { recordHighRisk } from "../metrics/record";
import { type AgentCall, admitCall, type CallStep } from "../pipeline/admit";
import { context, knownEffect } from "../pipeline/answers";
import { type Charge, canChargeCall } from "../pipeline/budget";
import { decideApproval, withdrawApproval } from "../pipeline/decide";
import { asEditedCall, type EditPlan, prepareEdit } from "../pipeline/edit";
import { type ExecutionPlan, executeCall, type RunKeeping } from "../pipeline/execute";
import { grantedTools, type RunToolSet, reachOf, runTools, toolOfRun } from "../pipeline/grants";
import { currentPolicyVersion, intakeCall, type TakenCall } from "../pipeline/intake";
import { approvingOf } from "../pipeline/late-decision";
import { alarmRings, endRun, reconcileInterrupted, retainUntil } from "../pipeline/run-events";
import { type CallRecord, newRun, type RunMeta, type StoredRequest } from "../pipeline/run-state";
import { runStatus } from "../pipeline/run-status";
import { joinedAnswer, settleSend } from "../pipeline/settle";
import type { Write } from "../pipeline/writes";
import { type RunRateGate, runRateGate } from "../ratelimit/run-gate";
import { takeToolToken } from "../ratelimit/tool-limits";
import { catalog } from "../tools";
import { type Envelope, type FailureSpec, failure } from "../wire/envelope";
import type { RunStatus } from "../wire/run-status";
import type { RunTrace } from "../wire/run-trace";
import type { TraceEntry } from "../wire/trace-entry";
import { ApprovalWaiters } from "./approval-waiters";
import * as tables from "./commit";
import { claimTenantWide, reconcileClaim } from "./effects-client";
import { type Inflight, KeysDeciding, KeysInFlight } from "./key-store";
import type {
  AddToolsAnswer,
  ApprovalWithCall,
  CallInput,
  DecideInput,
  DecideResult,
  OpenRunAnswer,
  OpenRunInput,
  PendingOpen,
  SessionCallAnswer,
  SessionState,
} from "./ledger-api";
import { ResultStore } from "./result-store";
import { retire, retiredRun } from "./retired-run";
import { RunDirectory } from "./run-index";
import { RunPublisher } from "./run-publisher";
import { ScenarioStore } from "./scenario-store";
import { recordSessionActivity } from "./session-activity";

export { RETENTION_MS } from "../pipeline/run-events";

/**
 * One agent run's single writer. Its decisions are the pure machine of `pipeline/`, which returns
 * every write; this object loads the run, reads what an event needs, applies the writes in one
 * `transactionSync` (no await inside, so concurrent calls can never both spend a budget's last unit
 * or both reserve a key), keeps requests in flight, and rings the alarm (`run-publisher.ts`).
 */
export class RunLedger extends DurableObject<Env> {
  readonly #stores: tables.LedgerStores;
  readonly #keeping: RunKeeping & { results: ResultStore; scenario: ScenarioStore };
  #run: RunMeta | null = null;
  /**
   * Whether storage holds the schema, brought up to date: read once when the object wakes, true once
   * something is stored, false again when retention deleted everything. A fresh object has none.
   */
  #schemaHere = false;
  readonly #inflight = new KeysInFlight();
  /** Keys between their tenant-wide claim and the admission's commit, in this instance. */
  readonly #deciding = new KeysDeciding();
  readonly #deferredReads = new tables.DeferredReads();
  /** The run's call rate and its lease of the tenant's; in memory, like any rate limiter's buckets. */
  #gate: RunRateGate | null = null;
  /** The return of the run's lease when it ended, for `end` to wait for. */
  #leaseReleased: Promise<void> | null = null;
  readonly #directory: RunDirectory;
  readonly #publisher: RunPublisher;
  /** Calls waiting for a pending approval's decision (`Prefer: wait`), in this instance. */
  readonly #waiters = new ApprovalWaiters();

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

  /**
   * Creates the schema in an object that has none (a fresh one, or one retention emptied), before
   * anything is stored; a woken object's was brought up to date when it woke.
   */
  #schema(): void {
    if (this.#schemaHere) return;
    this.#stores.run.create();
    this.#schemaHere = true;
  }

  async open(input: OpenRunInput): Promise<OpenRunAnswer> {
    // Awaited before the run is looked at: between the check and the insert nothing may interleave,
    // so concurrent opens of one task's run find one run.
    const catalogVersion = await catalog.version();
    if (this.#run) return this.#reopen(this.#run, input);
    const retired = this.#schemaHere ? null : retiredRun(this.ctx.storage.kv);
    if (retired) return { kind: "retired", run_id: retired.run_id, deleted_at: retired.deleted_at };
    const now = Date.now();
    const run = this.#create(input, catalogVersion, now, now);
    await this.#publisher.scheduleAlarm();
    return { kind: "opened", status: runStatus(run, now) };
  }

  /**
   * Creates the run an open stored nothing of (`PendingOpen`), on its first request, as that open
   * would have: its wall clock from the open, under the catalog version its tool list showed. Past
   * its deadline nothing is created (a run there may be one retention deleted), and its requests
   * find no run. Whether the run is here now.
   */
  async openPending(tenant: string, pending: PendingOpen): Promise<boolean> {
    if (this.#run) return this.#run.tenant === tenant;
    if (pastPendingDeadline(pending, Date.now())) return false;
    await this.#createPending(tenant, pending);
    return true;
  }

  /** Creates the run of a pending open its caller found absent and not past its deadline, and sets its alarm. */
  async #createPending(tenant: string, pending: PendingOpen): Promise<void> {
    this.#create({ tenant, ...pending }, pending.catalog_version, pending.opened_at, Date.now());
    await this.#publisher.scheduleAlarm();
  }

  /**
   * Stores a new run, its task, its scenario and its directory entry in one commit. The alarm is
   * the caller's to set, right after.
   */
  #create(input: OpenRunInput, catalogVersion: string, openedAt: number, now: number): RunMeta {
    this.#schema();
    const run = newRun(input, loadConfig(this.env).environment, catalogVersion, openedAt);
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

  /**
   * An open for a run that exists: only the same task's, with the same request, gets it back, or
   * the same tenant's reserved open of it (its session's run ids are random and signed, so another
   * open of one is the same session's).
   */
  #reopen(run: RunMeta, input: OpenRunInput): OpenRunAnswer {
    const task = this.#stores.run.task();
    if (input.reserved && !input.task && !task && run.tenant === input.tenant) {
      return { kind: "reused", status: runStatus(run, Date.now()) };
    }
    if (!task || !input.task || task.key !== input.task.key || run.tenant !== input.tenant) {
      throw new Error("run already exists");
    }
    const fields = differingFields(task.request, input.task.request);
    return fields.length > 0
      ? { kind: "conflict", fields }
      : { kind: "reused", status: runStatus(run, Date.now()) };
  }

  status(tenant: string): RunStatus | null {
    const run = this.#ownRun(tenant);
    return run ? runStatus(run, Date.now()) : null;
  }

  /** The run's tool set (opened subset, added tools, reach), for its spec export. */
  toolSet(tenant: string): RunToolSet | null {
    const run = this.#ownRun(tenant);
    return run
      ? {
          namespace: run.namespace,
          tools: run.tools ?? null,
          added_tools: run.added_tools ?? [],
          reach: reachOf(run),
        }
      : null;
  }

  /**
   * Adds granted tools to an open run, by name (`POST /v1/runs/{run_id}/tools`): checked here
   * against the tenant's grants as they are now, so nothing outside them is ever added. Tools the
   * run has already are left as they are.
   */
  addTools(tenant: string, asked: string[]): AddToolsAnswer {
    const run = this.#ownRun(tenant);
    if (!run) return { kind: "not_found" };
    if (run.state === "closed") return { kind: "closed" };
    const namespaces = loadConfig(this.env).tenants[tenant]?.namespaces ?? [];
    const have = runTools(catalog, run, [])
      .filter((tool) => tool.builtin === null)
      .map(toolRef);
    const resolved = resolveSubset(grantedTools(catalog, reachOf(run), namespaces), asked, "tools", have);
    if (!resolved.ok) return { kind: "refused", problems: resolved.problems };
    const added = [...(run.added_tools ?? []), ...resolved.refs.filter((ref) => !have.includes(ref))];
    this.ctx.storage.transactionSync(() => this.#stores.run.writeAddedTools(added));
    this.#run = { ...run, added_tools: added };
    return { kind: "added", tool_set: this.toolSet(tenant) as RunToolSet };
  }

  /** Ends the run: later calls are refused and its pending approvals expire, saying why. */
  async end(tenant: string): Promise<RunStatus | null> {
    const run = this.#ownRun(tenant);
    if (!run) return null;
    await this.#commit(() => endRun(run, this.#stores.approvals.pending(), Date.now()));
    // Answered once its tokens are back: a caller ending runs to make room sees the room at once.
    await this.#leaseReleased;
    return runStatus(this.#run ?? run, Date.now());
  }

  /**
   * An MCP session's request: whether it may continue ("live", its activity recorded), or not
   * ("ended"), or whether there is no run of the tenant here ("none": not opened yet, or its data
   * is gone). A run past its deadline or idle longer than `idleMs` is ended here, so an abandoned
   * session holds nothing open; a closed one just refuses.
   */
  touchSession(tenant: string, now: number, idleMs: number): Promise<SessionState> {
    return this.#session(tenant, now, idleMs);
  }

  /**
   * An MCP session's tool call, in one request: the session's liveness is decided as by
   * `touchSession` (a past-deadline or idle run is ended here), and only a live session's call goes
   * on to be admitted; otherwise the answer says why the session is over, and nothing is called.
   */
  async sessionCall(input: CallInput, idleMs: number): Promise<SessionCallAnswer> {
    const session = await this.#session(input.tenant, Date.now(), idleMs);
    return session === "live" ? { session, envelope: await this.#call(input) } : { session };
  }

  async #session(tenant: string, now: number, idleMs: number): Promise<SessionState> {
    const run = this.#ownRun(tenant);
    if (!run) return "none";
    if (run.state === "closed") return "ended";
    if (recordSessionActivity(this.ctx.storage.kv, run, now, idleMs)) return "live";
    await this.#commit(() => endRun(run, this.#stores.approvals.pending(), now));
    return "ended";
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

  approvalWithCall(tenant: string, approvalId: string): ApprovalWithCall | null {
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
   * Settles sends a restart cut off, expires the approvals that can no longer execute, retries what
   * the directory is owed, and deletes the run's data once its retention has passed (not a moment
   * before). One alarm serves all: it is set to whichever comes first.
   */
  override async alarm(): Promise<void> {
    this.#publisher.alarmRang();
    if (!this.#schemaHere) {
      // An object retention emptied keeps only its run's mark, until no shard holds the run's effects.
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
    const policy = await currentPolicyVersion(this.env, run);
    const escalationRole = loadConfig(this.env).tenants[run.tenant]?.escalation_role ?? null;
    // Sends a restart cut off (left "sending", their trace entries open) settle in doubt here.
    const interrupted = tables.interruptedView(this.#stores, run, this.#inflight.keys());
    await this.#commit(() => [
      ...reconcileInterrupted(interrupted, now),
      ...alarmRings(run, this.#stores.approvals.pending(), now, policy, escalationRole),
    ]);
    // Whatever the directory is still owed, retried here (the alarm rings for it) until retention ends.
    await this.#directory.deliver(run.tenant);
    // No answer waits for the alarm: what its deliveries acknowledged is deleted now.
    this.#stores.outbox.deleteAcknowledged();
    if (now >= retainUntil(run)) {
      this.#run = null;
      // The input gate holds every other event until the deletion is done: none sees it half done.
      await this.ctx.storage.deleteAll();
      this.#schemaHere = false;
      this.#forgetMemory();
      this.#stores.outbox.storageDeleted();
      const { until } = retire(this.ctx.storage.kv, run, now);
      await this.ctx.storage.setAlarm(until);
      return;
    }
    await this.#publisher.scheduleAlarm();
  }

  /**
   * One tool call of this run, stage by stage: the run's call rate; intake (the run and its catalog,
   * then resolve → validate → policy, the digest, the key and the request: `pipeline/intake.ts`);
   * admit (`pipeline/admit.ts`, committed here); then an answer, a join of the identical call in
   * flight, or execute (dispatch → classify → validate the output → shape → record:
   * `pipeline/execute.ts`) and settle (`pipeline/settle.ts`, committed here).
   */
  call(input: CallInput): Promise<Envelope> {
    return this.#call(input);
  }

  async #call(input: CallInput): Promise<Envelope> {
    const envelope = await this.#callOnce(input);
    const wait = input.wait_ms ?? 0;
    const approval = envelope.approval;
    if (wait <= 0 || envelope.error?.code !== "approval_required" || approval?.state !== "pending") {
      return envelope;
    }
    // The caller asked to wait (`Prefer: wait`): until the approval's state changes, or the wait ends.
    const decided = await this.#waiters.wait(
      approval.id,
      Math.min(wait, Date.parse(approval.expires_at) - Date.now()),
    );
    if (!decided) return envelope;
    return this.#callOnce({ ...input, call_id: newCallId(), wait_ms: 0 });
  }

  async #callOnce(input: CallInput): Promise<Envelope> {
    if (!this.#run && input.open) {
      // Past its deadline the run is not created, and the call is refused as the run would refuse it.
      const late = pastPendingDeadline(input.open, Date.now());
      if (late) {
        return failure(
          { call_id: input.call_id, environment: loadConfig(this.env).environment, tool: input.request.tool },
          { code: "budget_exhausted", message: late.message, details: { limit: late.limit } },
        );
      }
      await this.#createPending(input.tenant, input.open);
    }
    const limited = await this.#rateLimited(input);
    if (limited) return this.#rateRefusal(input, limited);
    const taken = this.#edited(
      await intakeCall(this.env, this.#ownRun(input.tenant), input, this.#stores.keys, () =>
        this.#stores.run.countDiscovery(),
      ),
    );
    if (taken.kind === "refused") return taken.envelope;
    const { call } = taken;
    const toolLimited = await this.#toolLimited(taken);
    if (toolLimited) return toolLimited;
    const claimed = await this.#claimTenantWide(taken);
    if (claimed.kind === "refused") return claimed.envelope;
    const stored = call.key === null ? null : this.#stores.keys.read(call.key, null);
    const { step, inflight, admission, approval } = await this.#admit(taken, claimed.check).finally(() => {
      if (claimed.check) this.#deciding.release(claimed.check.claim.key);
    });
    this.#countHighRisk(call, stored, step, approval);
    switch (step.kind) {
      case "answer":
        return step.envelope;
      case "join":
        return this.#join(step.key, call.call_id);
      case "send": {
        const { tool, args, key, request } = step;
        const fault = input.fault ?? null;
        const traceparent = call.traceparent ?? null;
        return this.#execute(
          inflight,
          { callId: call.call_id, tool, key, request, args, fault, traceparent },
          admission,
          approval,
        );
      }
    }
  }

  /**
   * The high-risk rates' share of a keyed call the machine decided (`metrics/events.ts`): a poll
   * counts nothing; a key stored with other bytes is an idempotency conflict; a send of a write or
   * destructive call whose policy requires an approval not granted for its key is a bypass. The
   * machine sends no such call; the count is there so the rate is measured, not assumed.
   */
  #countHighRisk(
    call: AgentCall,
    stored: CallRecord | null,
    step: CallStep,
    approval: ApprovalRecord | null,
  ): void {
    const { prepared, key, request } = call;
    if (key === null || prepared.refusal !== null || !prepared.tool) return;
    const [open] = step.writes;
    const poll = open?.kind === "trace_open" && open.entry.poll === true;
    const bytesOf = (r: StoredRequest | null) => (r ? JSON.stringify([r.method, r.target, r.body]) : null);
    const storedBytesDiffer =
      stored !== null && request !== null && bytesOf(stored.request) !== bytesOf(request);
    const granted = approval?.state === "approved" || approval?.state === "executed";
    const effect = prepared.tool.side_effect === "write" || prepared.tool.side_effect === "destructive";
    const sentWithoutRequiredApproval =
      step.kind === "send" && effect && prepared.approval.required && !granted;
    const run = this.#loaded();
    recordHighRisk(
      this.env,
      { tenant: run.tenant, namespace: run.namespace },
      prepared.tool.name,
      { poll, storedBytesDiffer, sentWithoutRequiredApproval },
      this.ctx,
    );
  }

  /**
   * A call whose key is the one an operator's edit replaced (the agent resends what it asked for)
   * becomes the edited call: the key as asked has no record any more, and must never get one.
   */
  #edited(taken: TakenCall): TakenCall {
    if (taken.kind !== "ready") return taken;
    const { key } = taken.call;
    if (key === null || this.#inflight.has(key) || this.#stores.keys.read(key, null)) return taken;
    const approval = this.#stores.approvals.byAskedKey(key);
    if (!approval) return taken;
    const record = this.#stores.keys.read(approval.idempotency_key, null);
    return { ...taken, call: asEditedCall(taken.call, approval, record?.request ?? null) };
  }

  /**
   * The tenant-wide step of a call that may be a new effect (a valid write or destructive call whose
   * key this run has not recorded): its claim goes to the tenant's effect shards before the admission
   * commits the key. The key is "deciding" meanwhile, so a shard reconciling it waits rather than
   * release a claim about to be committed. Shards out of reach refuse the call before anything is
   * reserved or sent; a claim they made anyway is released by their reconciliation.
   */
  async #claimTenantWide(
    taken: Extract<TakenCall, { kind: "ready" }>,
  ): Promise<{ kind: "refused"; envelope: Envelope } | { kind: "ready"; check: TenantCheck | null }> {
    const { call, tenant } = taken;
    const { prepared, key } = call;
    const run = this.#loaded();
    if (key === null || prepared.refusal !== null || run.state === "closed")
      return { kind: "ready", check: null };
    if (this.#inflight.has(key) || this.#stores.keys.read(key, null)) return { kind: "ready", check: null };
    const claim = await claimOf({
      tool: prepared.tool,
      tenant,
      key,
      run_id: run.run_id,
      args: prepared.args,
      trace_args: call.trace_args,
      now: call.now,
    });
    if (!claim) return { kind: "ready", check: null };
    // Held from here until the admission committed (the caller releases it), or the step failed.
    this.#deciding.hold(key);
    try {
      return { kind: "ready", check: await claimTenantWide(this.env, run.tenant, tenant, claim) };
    } catch (error) {
      this.#deciding.release(key);
      console.error(
        `the tenant-wide step of ${key} failed; the call is refused before anything is sent`,
        error,
      );
      const context = {
        call_id: call.call_id,
        environment: run.environment,
        tool: prepared.toolName,
        idempotency_key: key,
      };
      return {
        kind: "refused",
        envelope: failure(context, {
          code: "transient_error",
          message:
            "The tenant's record of effects could not be reached, so nothing was reserved or sent. Make the identical call again.",
          side_effect_confirmed: false,
          retry_after_ms: 1_000,
        }),
      };
    }
  }

  /**
   * What became of a key a tenant shard holds a claim of (its reconciliation asks): "deciding" while
   * a call of this instance is between its claim and its commit, else the committed key's fate; a
   * key never committed was never dispatched, so its claim is released.
   */
  effectFate(tenant: string, key: string): EffectFate | "deciding" {
    if (this.#deciding.has(key)) return "deciding";
    if (!this.#ownRun(tenant)) return "released";
    return fateOfKey(this.#stores.keys.read(key, null), this.#stores.approvals.byKey(key));
  }

  /** The run's and the tenant's call rates: a refused call is no dispatch and commits nothing. */
  async #rateLimited(input: CallInput): Promise<FailureSpec | null> {
    const run = this.#ownRun(input.tenant);
    if (!run) return null;
    this.#gate ??= runRateGate(this.env, run);
    return this.#gate.take();
  }

  async #releaseLease(gate: RunRateGate): Promise<void> {
    try {
      await gate.release();
    } catch (error) {
      // Not returned now, the lease's tokens come back when its term ends at the tenant's bucket.
      console.error("rate limiter unavailable", error);
    }
  }

  /**
   * The answer of a call the run's or the tenant's rate refused. Nothing is sent, but the call may
   * be the resend of a key whose earlier send may have acted: the refusal then says what is known of
   * that effect (null while in doubt or in flight, the stored outcome once completed), never "not
   * done" for one that may have happened, as intake's refusals do. The call's key is derived only
   * here, on a refusal of a call that is not a read, so an admitted call pays nothing for it.
   */
  async #rateRefusal(input: CallInput, spec: FailureSpec): Promise<Envelope> {
    const run = this.#loaded();
    const plain = failure(
      { call_id: input.call_id, environment: run.environment, tool: input.request.tool },
      spec,
    );
    const named = input.request.tool;
    // A read named directly cannot have acted. Anything else goes through intake, which alone
    // resolves `use_tool`'s tool (named in its arguments) and a subset's tools of other namespaces.
    if (named === null || toolOfRun(catalog, run, named)?.side_effect === "read") return plain;
    const taken = this.#edited(await intakeCall(this.env, run, input, this.#stores.keys));
    if (taken.kind !== "ready" || taken.call.key === null || taken.call.prepared.refusal !== null)
      return plain;
    const { key } = taken.call;
    const { tool } = taken.call.prepared;
    const inflight = this.#inflight.has(key);
    const record = this.#stores.keys.read(key, null);
    if (!inflight && !record) return plain;
    const known = inflight ? { side_effect_confirmed: null, observed: null } : knownEffect(record);
    const ctx = context(run, input.call_id, tool.name, key, run.counters, Date.now(), {
      observed_state: known.observed,
    });
    return failure(ctx, {
      ...spec,
      side_effect_confirmed: known.side_effect_confirmed,
      external_id: known.external_id ?? null,
    });
  }

  /**
   * The tenant's limit on this tool (`tool_limits`), taken by a call that would be a new request:
   * a read, or a keyed call whose key this run has not recorded. A key already recorded is a
   * replay, a join, a wait for its approval or the resend of a send in doubt: it was counted when
   * it was first called, takes no token and is never refused here, so no answer to a resend says
   * "not done" of an effect its earlier send may have made. The key is looked at again after the
   * limiter answered: an identical call that recorded it meanwhile makes this one its join.
   */
  async #toolLimited({ call, tenant }: Extract<TakenCall, { kind: "ready" }>): Promise<Envelope | null> {
    const { prepared, key } = call;
    const run = this.#loaded();
    if (prepared.refusal !== null || run.state === "closed") return null;
    const recorded = () =>
      key !== null && (this.#inflight.has(key) || this.#stores.keys.read(key, null) !== null);
    if (recorded()) return null;
    const refusal = await takeToolToken(this.env, run.tenant, tenant.tool_limits, {
      namespace: prepared.tool.namespace,
      tool: prepared.tool.name,
      args: prepared.args,
    });
    if (!refusal || recorded()) return null;
    const context = { call_id: call.call_id, environment: run.environment, tool: prepared.toolName };
    return failure(context, refusal);
  }

  /**
   * Stage "admit". A read's admission waits in memory to commit with its outcome (see
   * `spendInMemory`); everything else (a key, an approval, a refusal, a replay) commits now, before
   * anything leaves.
   */
  async #admit({ call, tenant }: Extract<TakenCall, { kind: "ready" }>, check: TenantCheck | null) {
    const value = check?.claim.value;
    const view = tables.callView(
      this.#stores,
      this.#loaded(),
      call,
      {
        inflight: this.#inflight.has(call.key),
        uncommittedReads: this.#deferredReads.count(call.digest),
        maxOpenApprovals: tenant.max_open_approvals,
        approvalSlaMs: tenant.approval_sla_s === undefined ? null : tenant.approval_sla_s * 1_000,
      },
      check ? { check, per_run: (value && tenant.value_caps[value.currency]?.per_run) ?? null } : null,
    );
    const step = admitCall(view, call);
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
    if (step.kind === "send" && step.key !== null) await this.#publisher.scheduleAlarm();
    // What a keyed send's admission wrote to the outbox (its effect's fate "sent" for the tenant's
    // shards, news for the run's entry) waits for the send: the settle's commit replaces it with the
    // send's outcome, and one delivery carries both. It is stored, with the alarm set, so a send that
    // never settles still has it delivered; an approval change is never held back. A read's
    // admission committed nothing: what the outbox holds (a new run's entry) goes with its outcome's.
    if (!spent && (step.kind !== "send" || step.key === null || changed.length > 0))
      await this.#publisher.publish(changed);
    // The key's approval as the admission read it: no admission approves or executes one, and a
    // send leaves its own key's approval as it was (the sweep expires only pending ones, and a key
    // sent is never held), so the high-risk count and the execution need not read it again.
    return { step, inflight, admission, approval: view.approval };
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
    // What the operator decided on: the approval as it stood when the decision reached the run.
    const seen = this.#stores.approvals.byId(input.approval_id);
    const policy = await currentPolicyVersion(this.env, run);
    const callId = newCallId();
    const edit = await this.#prepareEdit(run, input, seen);
    if (edit.kind === "refused") return edit.result;
    const tool = seen ? toolOfRun(catalog, run, seen.tool) : undefined;
    try {
      // The decided approval goes to the directory again whatever the decision: a refusal means the
      // operator decided on a copy the ledger had left behind, and their list heals from this.
      const { result: decided, changed } = this.#commitStep(
        () =>
          decideApproval(tables.decisionView(this.#stores, this.#loaded(), input.approval_id, edit.view), {
            ...input,
            call_id: callId,
            now: Date.now(),
            policy_version: policy,
            edit: edit.plan,
            confirm_duplicate: input.confirm_duplicate ?? false,
            approving: approvingOf(input.decision, seen, tool, input.args),
          }),
        [input.approval_id],
      );
      // The approval as this decision left it: what a 200 describes unless it executes, whatever
      // another operator's decision changes while this one's delivery is awaited.
      const committed = this.#stores.approvals.byId(input.approval_id);
      const inflight = decided.kind === "send" ? this.#inflight.mark(decided.key) : null;
      if (decided.kind === "send") await this.#publisher.scheduleAlarm();
      await this.#publisher.publish(changed, true);
      if (decided.kind === "done" && decided.refusal) {
        const approval = this.#stores.approvals.byId(input.approval_id);
        return { ok: false, ...decided.refusal, approval };
      }
      if (decided.kind === "send") {
        const { key, request, tool, args } = decided;
        // Executed by an operator's decision: its span is in the run's own trace.
        await this.#execute(inflight, { callId, tool, key, request, args, fault: null, traceparent: null });
      } else if (committed) return { ok: true, approval: committed };
    } finally {
      if (edit.view?.check) {
        this.#deciding.release(edit.view.key);
        await this.#releaseUncommitted(edit.view.check);
      }
    }
    const approval = this.#stores.approvals.byId(input.approval_id);
    if (!approval) throw new Error(`approval ${input.approval_id} vanished while it was decided`);
    return { ok: true, approval };
  }

  /**
   * The tenant-wide claim of an edit its decision did not commit (refused, lost to another
   * operator's decision, or failed) is given back now: its shards ask this ledger what became of the
   * key, as their alarm would, and release it. Another call deciding or holding the same key keeps it.
   */
  async #releaseUncommitted(check: TenantCheck): Promise<void> {
    const { key } = check.claim;
    if (this.#deciding.has(key) || this.#inflight.has(key) || this.#stores.keys.read(key, null)) return;
    try {
      await reconcileClaim(this.env, this.#loaded().tenant, check.shards, key);
    } catch (error) {
      // Left pending, the claim is released by its shards' alarm a few seconds after it was made.
      console.error(`releasing the uncommitted claim of ${key} failed; the shards' alarm releases it`, error);
    }
  }

  /**
   * Approve with edit, before the decision commits: the edited arguments are checked like a call
   * (`pipeline/edit.ts`), and the edited call, a new effect, takes its tenant-wide step, replacing
   * the asked call's claim. The edited key is "deciding" from its claim until the decision
   * committed (the caller releases it), as an agent's call's key is. Anything the machine decides
   * anyway (no such approval, no longer pending, a role not held) is left to it.
   */
  async #prepareEdit(
    run: RunMeta,
    input: DecideInput,
    approval: ApprovalRecord | null,
  ): Promise<
    | { kind: "refused"; result: DecideResult }
    | {
        kind: "ready";
        plan: EditPlan | null;
        view: { key: string; check: TenantCheck | null; per_run: number | null } | null;
      }
  > {
    const none = { kind: "ready" as const, plan: null, view: null };
    if (input.decision !== "approve" || input.args === undefined || input.args === null) return none;
    const tool = approval ? toolOfRun(catalog, run, approval.tool) : undefined;
    const tenant = loadConfig(this.env).tenants[run.tenant];
    if (!approval || !tool || !tenant || !holdsRole(approval.approver_roles, input.operator_roles))
      return none;
    if (approval.state !== "pending") return none;
    const prepared = await prepareEdit(catalog, { run, tenant, tool, approval, args: input.args });
    if (prepared.kind === "unchanged") return none;
    if (prepared.kind === "refused") {
      return {
        kind: "refused",
        result: {
          ok: false,
          code: "edit_refused",
          message: prepared.refusal.message,
          refusal: prepared.refusal,
          approval,
        },
      };
    }
    const { plan } = prepared;
    const value = tool.value ? tenant.value_caps[tool.value.currency]?.per_run : undefined;
    const view = { key: plan.key, check: null, per_run: value ?? null };
    if (this.#inflight.has(plan.key) || this.#stores.keys.read(plan.key, null)) {
      return { kind: "ready", plan, view };
    }
    const claim = await claimOf({
      tool,
      tenant,
      key: plan.key,
      run_id: run.run_id,
      args: plan.args,
      trace_args: plan.trace_args,
      now: Date.now(),
    });
    if (!claim) return { kind: "ready", plan, view };
    this.#deciding.hold(plan.key);
    try {
      const check = await claimTenantWide(this.env, run.tenant, tenant, claim, approval.idempotency_key);
      return { kind: "ready", plan, view: { ...view, check } };
    } catch (error) {
      this.#deciding.release(plan.key);
      console.error(`the tenant-wide step of the edit of ${approval.id} failed; nothing was decided`, error);
      return {
        kind: "refused",
        result: {
          ok: false,
          code: "conflict_error",
          message:
            "The tenant's record of effects could not be reached, so the edit was not approved and nothing was sent. Try again.",
          approval,
        },
      };
    }
  }

  /**
   * The agent withdraws its approval request (an MCP client cancelled the task waiting for it): a
   * pending approval expires through the machine's expiry, committed like any decision so the
   * directory and the tenant's effect claims see it; a decided one is answered as it stands.
   */
  async withdrawApproval(
    tenant: string,
    approvalId: string,
    reason: string | null,
  ): Promise<ApprovalRecord | null> {
    if (!this.#ownRun(tenant)) return null;
    const { changed } = this.#commitStep(() => ({
      writes: withdrawApproval(this.#stores.approvals.byId(approvalId), reason, Date.now()),
    }));
    await this.#publisher.publish(changed, true);
    return this.#stores.approvals.byId(approvalId);
  }

  /** Stages "execute" and "settle" for a call the machine said to send. */
  async #execute(
    inflight: Inflight | null,
    send: Omit<ExecutionPlan, "run" | "keeping" | "approval">,
    admission: tables.DeferredAdmission | null = null,
    /** The key's approval when the caller read it in this call; read here otherwise. */
    known?: ApprovalRecord | null,
  ): Promise<Envelope> {
    const { key } = send;
    const approval = known !== undefined ? known : key ? this.#stores.approvals.byKey(key) : null;
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
          ...tables.settlementView(this.#stores, this.#loaded(), key, approval),
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
      // A keyed send's answer waits for its delivery: when the agent has it, the tenant's effect
      // shards hold the effect's fate (another run's identical call meets it confirmed, not in
      // doubt), and nothing the send owes the directory is left to run beside the agent's next call.
      // A read's delivery (a run entry, at most) goes on in the background.
      await this.#publisher.publish(changed, changed.length > 0 || key !== null);
      return settled.envelope;
    } catch (error) {
      // A version this call saw counted as the newest at once: it may never be stored now.
      this.#keeping.results.forget();
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
    if (wasOpen && this.#run?.state === "closed" && this.#gate) {
      this.#leaseReleased = this.#releaseLease(this.#gate);
      this.ctx.waitUntil(this.#leaseReleased);
    }
    // A call waiting for one of these approvals asks again now.
    for (const summary of committed.changed) this.#waiters.wake(summary.id);
    return committed;
  }

  /**
   * The run's own events (its end, the alarm) and a joined call's copy: their delivery is waited
   * for, so a run's end is in the operators' list when the answer arrives.
   */
  async #commit(writes: () => Write[]): Promise<void> {
    await this.#publisher.publish(this.#commitStep(() => ({ writes: writes() })).changed, true);
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

/**
 * Why a run its open stored nothing of may no longer be created: its deadline, counted from the
 * open, has passed (a run there may be one retention deleted). Null while it may.
 */
function pastPendingDeadline(pending: PendingOpen, now: number): Exclude<Charge, { ok: true }> | null {
  const unspent = { calls_used: 0, writes_used: 0, destructive_used: 0 };
  const charge = canChargeCall(
    pending.limits,
    unspent,
    pending.opened_at + pending.limits.deadline_s * 1000,
    now,
  );
  return charge.ok ? null : charge;
}
