import { DurableObject } from "cloudflare:workers";
import { type ApprovalRecord, type ApprovalSummary, approvalBlock, summarize } from "../approvals/model";
import { notifyApproval } from "../approvals/notify";
import { policyVersion } from "../approvals/policy-version";
import type { ToolSpec } from "../catalog/define-tool";
import { loadConfig } from "../config/load";
import type { TenantConfig } from "../config/tenants";
import type { Env } from "../env";
import {
  type ApprovalBlock,
  type Envelope,
  type EnvelopeContext,
  type FailureSpec,
  failure,
  success,
} from "../envelope";
import { type AttemptRecord, executeTool } from "../pipeline/execute";
import { type PreparedCall, prepareCall } from "../pipeline/prepare";
import { withTaint } from "../pipeline/taint";
import { refuseUnfitFault } from "../scenarios/accept";
import { injectFaults } from "../scenarios/inject";
import type { FaultPlan } from "../scenarios/modes";
import { ScenarioStore } from "../scenarios/scenario-store";
import { applyMasks } from "../shaping/mask";
import { catalog } from "../tools";
import { LEDGER_BINDING } from "../tools/builtins";
import { resolveUpstream } from "../upstream/bindings";
import { issueUpstreamCredential } from "../upstream/credential";
import { passApprovalGate, planDecision } from "./approval-gate";
import { ApprovalStore } from "./approval-store";
import { budgetLeft, type Counters, canChargeCall, canSpendEffect, spendEffect } from "./budget";
import { callDigest, deriveIdempotencyKey } from "./idempotency-key";
import type { CallInput, DecideInput, DecideResult, OpenRunInput } from "./ledger-api";
import { ResultStore } from "./result-store";
import { type RunStatus, runStatus } from "./run-status";
import { type RunMeta, RunStore } from "./run-store";
import { type Recorder, shapeResult, traceable } from "./shape-result";
import type { TraceEntry } from "./trace";

/** Keys, results, approvals and trace outlive the run by at least this long. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;

export type { CallInput, DecideInput, DecideResult, OpenRunInput };

/** How admission ended: answered at once, or sent upstream (leader), or joined an identical call in flight. */
type Admission =
  | { kind: "answered"; envelope: Envelope }
  | { kind: "leader"; seq: number; key: string | null; settle: (envelope: Envelope) => void }
  | { kind: "follower"; seq: number; shared: Promise<Envelope> };

type Leader = Extract<Admission, { kind: "leader" }>;

/**
 * One agent run's single writer: budgets, idempotency keys, approvals, repeats and trace live here,
 * in the run's own SQLite database. Admission (charge, repeat check, key lookup, approval gate, key
 * reservation, trace write-ahead) is one synchronous transaction, so concurrent calls of a run can
 * never both spend the last unit of a budget, both reserve the same key or both open an approval.
 */
export class RunLedger extends DurableObject<Env> {
  readonly #store: RunStore;
  #approvals: ApprovalStore | null = null;
  readonly #results: ResultStore;
  readonly #scenario: ScenarioStore;
  #run: RunMeta | null = null;
  /** Upstream credentials already signed for this run, by tool: the claims never change within a run. */
  readonly #credentials = new Map<string, string>();
  /** Upstream requests in flight, by idempotency key: identical concurrent calls share one. */
  readonly #inflight = new Map<string, Promise<Envelope>>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#store = new RunStore(ctx.storage.sql);
    this.#results = new ResultStore(ctx.storage.sql);
    this.#scenario = new ScenarioStore(ctx.storage.sql);
    // Nothing may be served before the schema is current and the run is loaded.
    void ctx.blockConcurrencyWhile(async () => {
      this.#store.migrate();
      this.#load(this.#store.readRun());
    });
  }

  #load(run: RunMeta | null): void {
    this.#run = run;
    this.#approvals = run ? new ApprovalStore(this.ctx.storage.sql, run) : null;
  }

  async open(input: OpenRunInput): Promise<RunStatus> {
    if (this.#run) throw new Error("run already exists");
    const now = Date.now();
    const run: RunMeta = {
      tenant: input.tenant,
      run_id: input.run_id,
      namespace: input.namespace,
      environment: loadConfig(this.env).environment,
      catalog_version: await catalog.version(),
      limits: input.limits,
      repeat_threshold: input.repeat_threshold,
      state: "open",
      created_at: now,
      deadline_at: now + input.limits.deadline_s * 1000,
      ended_at: null,
      counters: { calls_used: 0, writes_used: 0, destructive_used: 0 },
      fence_marker: crypto.randomUUID().replaceAll("-", "").slice(0, 12),
      tainted_by: null,
    };
    this.ctx.storage.transactionSync(() => {
      this.#store.insertRun(run);
      this.#scenario.insert(input.scenario ?? []);
    });
    this.#load(run);
    await this.#scheduleAlarm();
    return runStatus(run, now);
  }

  status(tenant: string): RunStatus | null {
    const run = this.#ownRun(tenant);
    return run ? runStatus(run, Date.now()) : null;
  }

  async end(tenant: string): Promise<RunStatus | null> {
    const run = this.#ownRun(tenant);
    if (!run) return null;
    if (run.state === "open") {
      const now = Date.now();
      this.#store.closeRun(now);
      this.#run = { ...run, state: "closed", ended_at: now };
      await this.#scheduleAlarm();
    }
    return runStatus(this.#run ?? run, Date.now());
  }

  /** Named readTrace because `trace` is the tail-worker handler name, which RPC reserves. */
  readTrace(tenant: string): { run: RunStatus; entries: TraceEntry[] } | null {
    const run = this.#ownRun(tenant);
    if (!run) return null;
    return { run: runStatus(run, Date.now()), entries: this.#store.readTrace() };
  }

  approval(tenant: string, approvalId: string): ApprovalRecord | null {
    if (!this.#ownRun(tenant)) return null;
    return this.#approvals?.byId(approvalId) ?? null;
  }

  /** One page of a large result of this run; null when the handle is unknown or the run's data expired. */
  resultPage(tenant: string, handle: string, cursor: number) {
    if (!this.#ownRun(tenant)) return null;
    return this.#results.page(handle, cursor);
  }

  /**
   * Expires approvals whose window closed, then deletes the run's data once its retention has
   * passed, and not a moment before. One alarm serves both: it is set to whichever comes first.
   */
  override async alarm(): Promise<void> {
    const run = this.#store.readRun();
    if (!run || !this.#approvals) return;
    const now = Date.now();
    const expired = this.#approvals.overdue(now);
    for (const approval of expired) this.#approvals.setState(approval.id, "expired", null);
    await this.#publish(expired.map((approval) => ({ ...summarize(approval), state: "expired" as const })));
    if (now >= this.#retainUntil(run)) {
      this.#load(null);
      await this.ctx.storage.deleteAll();
      return;
    }
    await this.#scheduleAlarm();
  }

  #retainUntil(run: RunMeta): number {
    return (run.ended_at ?? run.deadline_at) + RETENTION_MS;
  }

  async #scheduleAlarm(): Promise<void> {
    const run = this.#run;
    if (!run) return;
    const nextExpiry = this.#approvals?.nextExpiry() ?? null;
    const retention = this.#retainUntil(run);
    await this.ctx.storage.setAlarm(nextExpiry === null ? retention : Math.min(nextExpiry, retention));
  }

  /** The whole tool-call pipeline for one dispatch of this run. */
  async call(input: CallInput): Promise<Envelope> {
    const run = this.#ownRun(input.tenant);
    if (!run) {
      return failure(
        { call_id: input.call_id, environment: loadConfig(this.env).environment },
        { code: "not_found", message: "This run does not exist or its data has expired." },
      );
    }
    // A run keeps the tools it opened with: a deploy that changed the catalog must not change a
    // running agent's tools under it, so the run is told, plainly, to start over.
    const current = await catalog.version();
    if (current !== run.catalog_version) {
      return failure(
        { call_id: input.call_id, environment: run.environment, tool: input.request.tool },
        {
          code: "conflict_error",
          message: `The tool catalog changed since this run opened (${run.catalog_version} → ${current}). Open a new run to use the current tools.`,
          recommended_next_action: "stop",
          side_effect_confirmed: false,
          details: { run_catalog_version: run.catalog_version, current_catalog_version: current },
        },
      );
    }
    const tenant = this.#tenantConfig(run);
    const fault = input.fault ?? null;
    const prepared = withTaint(
      prepareCall(catalog, run.namespace, input.request, { tenantId: run.tenant, tenant }),
      run.tainted_by,
    );
    // Refused before admission, like a malformed header: the orchestrator's mistake costs no budget.
    const unfit = refuseUnfitFault(fault, prepared.tool);
    if (unfit) return failure(this.#context(input.call_id, prepared.toolName, null), unfit);
    const digest = await callDigest(prepared.toolName ?? "", prepared.rawArgs);
    const key =
      prepared.tool && prepared.args && prepared.tool.side_effect !== "read"
        ? await deriveIdempotencyKey({
            tenant: run.tenant,
            runId: run.run_id,
            tool: prepared.tool.name,
            args: prepared.args,
            intent: input.intent,
          })
        : null;
    const policy = prepared.approval.required ? await policyVersion(run.catalog_version, tenant) : null;
    const published: ApprovalSummary[] = [];
    const admission = this.#admit(input, prepared, digest, key, policy, published);
    for (const approval of published) this.ctx.waitUntil(notifyApproval(this.env, run.tenant, approval));
    await this.#publish(published);
    switch (admission.kind) {
      case "answered":
        return admission.envelope;
      case "follower":
        return this.#follow(admission.seq, input.call_id, admission.shared);
      case "leader":
        return this.#lead(
          admission,
          input.call_id,
          prepared.tool as ToolSpec,
          prepared.args ?? {},
          null,
          fault,
        );
    }
  }

  /**
   * An operator's decision. Approving executes the call exactly once, through the same dispatch path
   * and idempotency key the agent's call would take; a second approval of the same request finds it
   * no longer pending and executes nothing.
   */
  async decide(input: DecideInput): Promise<DecideResult> {
    const run = this.#ownRun(input.tenant);
    const approvals = this.#approvals;
    if (!run || !approvals)
      return { ok: false, code: "not_found", message: "No such approval.", approval: null };
    const currentPolicy = await policyVersion(run.catalog_version, this.#tenantConfig(run));
    const now = Date.now();
    let leader: Leader | null = null;
    let callId = "";
    const refused = this.ctx.storage.transactionSync((): DecideResult | null => {
      const approval = approvals.byId(input.approval_id);
      const plan = planDecision(approval, input.decision, {
        now,
        policyVersion: currentPolicy,
        runClosed: run.state === "closed",
        findTool: (name) => catalog.find(run.namespace, name),
        budgetRefusal: (tool) => {
          const effect = canSpendEffect(tool.side_effect, run.limits, run.counters);
          return effect.ok ? null : effect.message;
        },
      });
      if (!approval || plan.kind === "unchanged") {
        return approval
          ? { ok: true, approval }
          : { ok: false, code: "not_found", message: "No such approval.", approval: null };
      }
      switch (plan.kind) {
        case "expire":
          approvals.setState(approval.id, "expired", { at: now, by: null, reason: plan.why });
          return {
            ok: false,
            code: "conflict_error",
            message: `This approval can no longer be granted: ${plan.why}.`,
            approval,
          };
        case "refuse":
          return { ok: false, code: "conflict_error", message: plan.message, approval };
        case "reject":
          approvals.setState(approval.id, "rejected", { at: now, by: input.operator, reason: input.reason });
          return null;
        case "approve": {
          const { tool } = plan;
          approvals.setState(approval.id, "approved", { at: now, by: input.operator, reason: input.reason });
          callId = `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
          const counters = spendEffect(tool.side_effect, run.counters);
          this.#store.writeCounters(counters);
          this.#run = { ...run, counters };
          this.#store.reserveKey(approval.idempotency_key, tool.name, now);
          const seq = this.#store.insertTrace({
            call_id: callId,
            actor: input.operator,
            started_at: now,
            tool: tool.name,
            side_effect: tool.side_effect,
            args: approval.args,
            call_digest: approval.args_digest,
            idempotency_key: approval.idempotency_key,
            catalog_version: run.catalog_version,
          });
          leader = this.#becomeLeader(seq, approval.idempotency_key);
          return null;
        }
      }
    });
    if (refused) {
      const latest = refused.approval ? approvals.byId(refused.approval.id) : null;
      if (latest) await this.#publish([summarize(latest)]);
      return refused.ok ? refused : { ...refused, approval: latest };
    }

    const approval = approvals.byId(input.approval_id) as ApprovalRecord;
    if (leader) {
      const tool = catalog.find(run.namespace, approval.tool) as ToolSpec;
      await this.#lead(leader, callId, tool, approval.args, approvalBlock(approval));
    }
    const latest = approvals.byId(input.approval_id) as ApprovalRecord;
    await this.#publish([summarize(latest)]);
    return { ok: true, approval: latest };
  }

  #tenantConfig(run: RunMeta): TenantConfig {
    const tenant = loadConfig(this.env).tenants[run.tenant];
    if (!tenant) throw new Error(`tenant ${run.tenant} is no longer configured`);
    return tenant;
  }

  /** Writes approval changes through to the tenant's directory, where operators list them. */
  async #publish(summaries: ApprovalSummary[]): Promise<void> {
    const run = this.#run;
    if (!run || summaries.length === 0) return;
    const directory = this.env.APPROVAL_DIRECTORY.get(this.env.APPROVAL_DIRECTORY.idFromName(run.tenant));
    for (const summary of summaries) await directory.upsert(summary);
    await this.#scheduleAlarm();
  }

  #ownRun(tenant: string): RunMeta | null {
    const run = this.#run;
    return run && run.tenant === tenant ? run : null;
  }

  #context(
    callId: string,
    tool: string | null,
    key: string | null,
    approval: ApprovalBlock | null = null,
  ): EnvelopeContext {
    const run = this.#run as RunMeta;
    return {
      call_id: callId,
      environment: run.environment,
      tool,
      idempotency_key: key,
      budget: budgetLeft(run.limits, run.counters, run.deadline_at, Date.now()),
      approval,
    };
  }

  /**
   * Stage "ledger": charge, repeat check, key lookup, approval gate, key reservation and trace
   * write-ahead, in one synchronous transaction. No await may appear in here: the DO's single thread
   * is what makes "check then spend" atomic across concurrent calls.
   */
  #admit(
    input: CallInput,
    prepared: PreparedCall,
    digest: string,
    key: string | null,
    policy: string | null,
    published: ApprovalSummary[],
  ): Admission {
    const run = this.#run as RunMeta;
    const { tool, toolName } = prepared;
    const now = Date.now();
    let counters: Counters = run.counters;
    return this.ctx.storage.transactionSync((): Admission => {
      const seq = this.#store.insertTrace({
        call_id: input.call_id,
        started_at: now,
        tool: toolName,
        side_effect: tool?.side_effect ?? null,
        args: tool ? applyMasks(prepared.rawArgs, tool.sensitive_args) : prepared.rawArgs,
        call_digest: digest,
        idempotency_key: key,
        catalog_version: run.catalog_version,
      });
      const commitCounters = () => {
        this.#store.writeCounters(counters);
        this.#run = { ...run, counters };
      };
      const answer = (
        spec: FailureSpec | null,
        envelope?: Envelope,
        approval: ApprovalBlock | null = null,
      ): Admission => {
        commitCounters();
        const out =
          envelope ?? failure(this.#context(input.call_id, toolName, key, approval), spec as FailureSpec);
        this.#store.completeTrace(seq, {
          ended_at: Date.now(),
          outcome: out.outcome,
          error_code: out.error?.code ?? null,
          upstream_status: null,
          replayed: out.replayed,
          attempts: [],
        });
        return { kind: "answered", envelope: out };
      };

      if (run.state === "closed") {
        return answer({
          code: "run_closed",
          message: "This run has been ended; it accepts no more tool calls.",
        });
      }
      const charge = canChargeCall(run.limits, counters, run.deadline_at, now);
      if (!charge.ok) {
        return answer({
          code: "budget_exhausted",
          message: charge.message,
          details: { limit: charge.limit },
        });
      }
      counters = { ...counters, calls_used: counters.calls_used + 1 };
      if (prepared.refusal) return answer(prepared.refusal);

      // This dispatch is already in the trace, so "earlier identical calls" excludes it.
      const earlier = this.#store.countDigest(digest) - 1;
      if (earlier >= run.repeat_threshold - 1) {
        return answer({
          code: "repeat_detected",
          message: `This exact call was already made ${earlier} times in this run; repeating it will not change the result. Stop and hand over to a human.`,
          details: { earlier_identical_calls: earlier, threshold: run.repeat_threshold },
        });
      }

      if (key !== null && tool) {
        const record = this.#store.readKey(key);
        if (record?.state === "completed" && record.envelope) {
          return answer(null, { ...record.envelope, ...this.#replayFields(input.call_id, counters) });
        }
        const shared = this.#inflight.get(key);
        if (shared) {
          commitCounters();
          return { kind: "follower", seq, shared };
        }
        // A key already reserved was already allowed to run (and approved, if it needed that):
        // resending it is recovery, not a new effect, so it passes the gate and spends nothing.
        if (!record) {
          if (prepared.approval.required) {
            const gate = passApprovalGate(
              this.#approvals as ApprovalStore,
              this.#tenantConfig(run),
              {
                callId: input.call_id,
                key,
                tool,
                args: prepared.args,
                reasons: prepared.approval.reasons,
                digest,
                policyVersion: policy ?? "",
                now,
              },
              published,
            );
            if (gate) return answer(gate.spec, undefined, gate.approval);
          }
          const effect = canSpendEffect(tool.side_effect, run.limits, counters);
          if (!effect.ok) {
            return answer({
              code: "budget_exhausted",
              message: effect.message,
              details: { limit: effect.limit },
            });
          }
          counters = spendEffect(tool.side_effect, counters);
        }
        this.#store.reserveKey(key, tool.name, now);
      }
      commitCounters();
      return this.#becomeLeader(seq, key);
    });
  }

  #becomeLeader(seq: number, key: string | null): Leader {
    let settle: (envelope: Envelope) => void = () => {};
    if (key !== null) {
      this.#inflight.set(
        key,
        new Promise<Envelope>((resolve) => {
          settle = resolve;
        }),
      );
    }
    return { kind: "leader", seq, key, settle: (envelope) => settle(envelope) };
  }

  #replayFields(callId: string, counters: Counters) {
    const run = this.#run as RunMeta;
    return {
      call_id: callId,
      replayed: true,
      budget: budgetLeft(run.limits, counters, run.deadline_at, Date.now()),
    };
  }

  async #follow(seq: number, callId: string, shared: Promise<Envelope>): Promise<Envelope> {
    const envelope = await shared;
    const run = this.#run as RunMeta;
    const out = { ...envelope, ...this.#replayFields(callId, run.counters) };
    this.#store.completeTrace(seq, {
      ended_at: Date.now(),
      outcome: out.outcome,
      error_code: out.error?.code ?? null,
      upstream_status: null,
      replayed: true,
      attempts: [],
    });
    return out;
  }

  /** Stages "dispatch" to "record" for the call that actually goes upstream. */
  async #lead(
    leader: Leader,
    callId: string,
    tool: ToolSpec,
    args: Record<string, unknown>,
    approval: ApprovalBlock | null,
    fault: FaultPlan | null = null,
  ): Promise<Envelope> {
    const { seq, key } = leader;
    const executed = approval ? { ...approval, state: "executed" as const } : null;
    let envelope: Envelope;
    let upstreamStatus: number | null = null;
    let attempts: AttemptRecord[] = [];
    let record: Recorder = () => {};
    let executedApproval: ApprovalRecord | null = null;
    try {
      if (tool.upstream.binding === LEDGER_BINDING) {
        envelope = this.#serveBuiltin(callId, tool, args);
      } else {
        const execution = await this.#execute(callId, tool, args, key, fault);
        upstreamStatus = execution.status;
        attempts = execution.attempts;
        if (execution.ok) {
          const run = this.#run as RunMeta;
          const shaped = await shapeResult(
            {
              callId,
              fenceMarker: run.fence_marker,
              alreadyTainted: run.tainted_by !== null,
              results: this.#results,
              findTool: (name) => catalog.find(run.namespace, name),
              observe: (observer, observeArgs) => this.#execute(callId, observer, observeArgs, null),
              taint: (taint) => {
                this.#store.taint(taint);
                const current = this.#run as RunMeta;
                this.#run = { ...current, tainted_by: current.tainted_by ?? taint };
              },
            },
            tool,
            args,
            execution.data,
          );
          attempts = [...attempts, ...shaped.attempts];
          record = shaped.record;
          envelope = shaped.failure
            ? failure(
                { ...this.#context(callId, tool.name, key, approval), observed_state: shaped.observed },
                shaped.failure,
              )
            : success(
                { ...this.#context(callId, tool.name, key, executed), observed_state: shaped.observed },
                shaped.data,
              );
        } else {
          envelope = failure(this.#context(callId, tool.name, key, approval), execution.failure);
        }
      }
    } catch (error) {
      console.error("tool dispatch failed", tool.name, error);
      envelope = failure(this.#context(callId, tool.name, key, approval), {
        code: "internal_error",
        message:
          "The proxy failed while dispatching this call. Call again with the same arguments; it cannot happen twice.",
        side_effect_confirmed: tool.side_effect === "read" ? false : null,
      });
    }

    this.ctx.storage.transactionSync(() => {
      if (key) {
        // A retryable failure leaves the key in doubt: the next identical call resends it, unchanged.
        const state = envelope.outcome === "retryable_failure" ? "in_doubt" : "completed";
        this.#store.settleKey(key, state, state === "completed" ? envelope : null, Date.now());
        // An approved call is executed once its outcome is known, whoever resent it: the operator's
        // approval or, after an unclear first attempt, the agent's identical call.
        const approved = this.#approvals?.byKey(key);
        if (approved?.state === "approved" && state === "completed") {
          this.#approvals?.setState(approved.id, "executed", null, envelope);
          executedApproval = approved;
        }
      }
      record();
      this.#store.completeTrace(seq, {
        ended_at: Date.now(),
        outcome: envelope.outcome,
        error_code: envelope.error?.code ?? null,
        upstream_status: upstreamStatus,
        replayed: false,
        attempts,
        result: traceable(envelope.data),
      });
    });
    if (key) {
      this.#inflight.delete(key);
      leader.settle(envelope);
    }
    if (executedApproval) await this.#publish([{ ...summarize(executedApproval), state: "executed" }]);
    return envelope;
  }

  /** Stages "dispatch" and "classify": one tool call upstream with a credential of this run and tool. */
  async #execute(
    callId: string,
    tool: ToolSpec,
    args: Record<string, unknown>,
    key: string | null,
    callFault: FaultPlan | null = null,
  ) {
    const run = this.#run as RunMeta;
    const resolved = resolveUpstream(this.env, tool.upstream.binding);
    if (!resolved) throw new Error(`binding ${tool.upstream.binding} is missing`);
    // Checked per dispatch, not at run open: turning the var off stops every stored scenario too.
    const upstream =
      loadConfig(this.env).faultInjection === "sandbox-header"
        ? injectFaults(resolved, {
            scenario: this.#scenario,
            tool: tool.name,
            side_effect: tool.side_effect,
            callFault,
          })
        : resolved;
    let credential = this.#credentials.get(tool.name);
    if (!credential) {
      credential = await issueUpstreamCredential(
        { tenant: run.tenant, run: run.run_id, tool: tool.name, exp: run.deadline_at + RETENTION_MS },
        loadConfig(this.env).upstreamKeys,
      );
      this.#credentials.set(tool.name, credential);
    }
    const headers: Record<string, string> = { authorization: `Bearer ${credential}`, "x-request-id": callId };
    if (key) headers["idempotency-key"] = key;
    return executeTool({ tool, args, upstream, headers });
  }

  /** read_result_page: served from this run's own storage. */
  #serveBuiltin(callId: string, tool: ToolSpec, args: Record<string, unknown>): Envelope {
    const handle = String(args.handle);
    const cursor = typeof args.cursor === "number" ? args.cursor : 0;
    const page = this.#results.page(handle, cursor);
    if (!page) {
      return failure(this.#context(callId, tool.name, null), {
        code: "not_found",
        message: `No page ${cursor} of result ${handle} in this run. Use a handle this run returned and a cursor below its page count.`,
        problems: [
          {
            field: "handle",
            reason: "unknown handle or cursor",
            hint: "Handles belong to one run and expire with it.",
          },
        ],
      });
    }
    return success(this.#context(callId, tool.name, null), page);
  }
}
