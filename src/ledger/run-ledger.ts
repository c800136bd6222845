import { DurableObject } from "cloudflare:workers";
import type { ToolSpec } from "../catalog/define-tool";
import { loadConfig } from "../config/load";
import type { RunLimits } from "../config/tenants";
import type { Env } from "../env";
import { type Envelope, type EnvelopeContext, type FailureSpec, failure, success } from "../envelope";
import { executeTool } from "../pipeline/execute";
import { type CallRequest, prepareCall } from "../pipeline/prepare";
import { catalog } from "../tools";
import { resolveUpstream } from "../upstream/bindings";
import { issueUpstreamCredential } from "../upstream/credential";
import { budgetLeft, type Counters, canChargeCall, canSpendEffect, spendEffect } from "./budget";
import { callDigest, deriveIdempotencyKey } from "./idempotency-key";
import { type RunStatus, runStatus } from "./run-status";
import { type RunMeta, RunStore } from "./run-store";
import type { TraceEntry } from "./trace";

/** Keys, results and trace outlive the run by at least this long. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;

export interface OpenRunInput {
  tenant: string;
  run_id: string;
  namespace: string;
  limits: RunLimits;
  repeat_threshold: number;
}

export interface CallInput {
  call_id: string;
  /** From the verified run token; the ledger refuses a caller of another tenant. */
  tenant: string;
  request: CallRequest;
  /** Orchestrator-supplied intent nonce (a header, never a model argument). */
  intent: string | null;
}

/** How admission ended: answered at once, or sent upstream (leader), or joined an identical call in flight. */
type Admission =
  | { kind: "answered"; envelope: Envelope }
  | { kind: "leader"; seq: number; key: string | null; settle: (envelope: Envelope) => void }
  | { kind: "follower"; seq: number; shared: Promise<Envelope> };

/**
 * One agent run's single writer: budgets, idempotency keys, repeats and trace live here, in the
 * run's own SQLite database. Admission (charge, repeat check, key reservation, trace write-ahead)
 * is one synchronous transaction, so concurrent calls of a run can never both spend the last unit
 * of a budget or both reserve the same key.
 */
export class RunLedger extends DurableObject<Env> {
  readonly #store: RunStore;
  #run: RunMeta | null = null;
  /** Upstream requests in flight, by idempotency key: identical concurrent calls share one. */
  readonly #inflight = new Map<string, Promise<Envelope>>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#store = new RunStore(ctx.storage.sql);
    // Nothing may be served before the schema exists and the run is loaded.
    void ctx.blockConcurrencyWhile(async () => {
      this.#store.migrate();
      this.#run = this.#store.readRun();
    });
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
    };
    this.#store.insertRun(run);
    this.#run = run;
    // A run that is never ended is over at its deadline; its data is kept 24 h past that.
    await this.ctx.storage.setAlarm(run.deadline_at + RETENTION_MS);
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
      await this.ctx.storage.setAlarm(now + RETENTION_MS);
    }
    return runStatus(this.#run ?? run, Date.now());
  }

  /** Named readTrace because `trace` is the tail-worker handler name, which RPC reserves. */
  readTrace(tenant: string): { run: RunStatus; entries: TraceEntry[] } | null {
    const run = this.#ownRun(tenant);
    if (!run) return null;
    return { run: runStatus(run, Date.now()), entries: this.#store.readTrace() };
  }

  /** Deletes the run's data once the retention window has passed, and not a moment before. */
  override async alarm(): Promise<void> {
    const run = this.#store.readRun();
    if (!run) return;
    const retainUntil = (run.ended_at ?? run.deadline_at) + RETENTION_MS;
    if (Date.now() < retainUntil) {
      await this.ctx.storage.setAlarm(retainUntil);
      return;
    }
    this.#run = null;
    await this.ctx.storage.deleteAll();
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
    const config = loadConfig(this.env);
    const tenant = config.tenants[run.tenant];
    if (!tenant) throw new Error(`tenant ${run.tenant} is no longer configured`);

    const prepared = prepareCall(catalog, run.namespace, input.request, { tenantId: run.tenant, tenant });
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

    const admission = this.#admit(
      input,
      prepared.tool,
      prepared.toolName,
      prepared.rawArgs,
      prepared.refusal,
      digest,
      key,
    );
    switch (admission.kind) {
      case "answered":
        return admission.envelope;
      case "follower":
        return this.#follow(admission.seq, input.call_id, admission.shared);
      case "leader":
        return this.#lead(admission, input.call_id, prepared.tool as ToolSpec, prepared.args ?? {});
    }
  }

  #ownRun(tenant: string): RunMeta | null {
    const run = this.#run;
    return run && run.tenant === tenant ? run : null;
  }

  #context(callId: string, tool: string | null, key: string | null, replayed = false): EnvelopeContext {
    const run = this.#run as RunMeta;
    return {
      call_id: callId,
      environment: run.environment,
      tool,
      idempotency_key: key,
      replayed,
      budget: budgetLeft(run.limits, run.counters, run.deadline_at, Date.now()),
    };
  }

  /**
   * Stage "ledger": charge, repeat check, key lookup or reservation and trace write-ahead, in one
   * synchronous transaction. No await may appear in here: the DO's single thread is what makes
   * "check then spend" atomic across concurrent calls.
   */
  #admit(
    input: CallInput,
    tool: ToolSpec | null,
    toolName: string | null,
    rawArgs: unknown,
    refusal: FailureSpec | null,
    digest: string,
    key: string | null,
  ): Admission {
    const run = this.#run as RunMeta;
    const now = Date.now();
    let counters: Counters = run.counters;
    const result = this.ctx.storage.transactionSync((): Admission => {
      const seq = this.#store.insertTrace({
        call_id: input.call_id,
        started_at: now,
        tool: toolName,
        side_effect: tool?.side_effect ?? null,
        args: rawArgs,
        call_digest: digest,
        idempotency_key: key,
        catalog_version: run.catalog_version,
      });
      const answer = (spec: FailureSpec | null, envelope?: Envelope): Admission => {
        this.#store.writeCounters(counters);
        this.#run = { ...run, counters };
        const out = envelope ?? failure(this.#context(input.call_id, toolName, key), spec as FailureSpec);
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
      if (refusal) return answer(refusal);

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
          this.#store.writeCounters(counters);
          this.#run = { ...run, counters };
          return { kind: "follower", seq, shared };
        }
        if (!record) {
          // Only a new key spends a write or destructive unit; resending an in-doubt key does not.
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

      this.#store.writeCounters(counters);
      this.#run = { ...run, counters };
      let settle: (envelope: Envelope) => void = () => {};
      if (key !== null) {
        this.#inflight.set(
          key,
          new Promise<Envelope>((resolve) => {
            settle = resolve;
          }),
        );
      }
      return { kind: "leader", seq, key, settle };
    });
    return result;
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
    admission: Extract<Admission, { kind: "leader" }>,
    callId: string,
    tool: ToolSpec,
    args: Record<string, unknown>,
  ): Promise<Envelope> {
    const run = this.#run as RunMeta;
    const { seq, key } = admission;
    let envelope: Envelope;
    let upstreamStatus: number | null = null;
    let attempts: Awaited<ReturnType<typeof executeTool>>["attempts"] = [];
    try {
      const upstream = resolveUpstream(this.env, tool.upstream.binding);
      if (!upstream) throw new Error(`binding ${tool.upstream.binding} is missing`);
      const credential = await issueUpstreamCredential(
        { tenant: run.tenant, run: run.run_id, tool: tool.name, exp: run.deadline_at + RETENTION_MS },
        loadConfig(this.env).upstreamKeys,
      );
      const headers: Record<string, string> = {
        authorization: `Bearer ${credential}`,
        "x-request-id": callId,
      };
      if (key) headers["idempotency-key"] = key;
      const execution = await executeTool({ tool, args, upstream, headers });
      upstreamStatus = execution.status;
      attempts = execution.attempts;
      envelope = execution.ok
        ? success(this.#context(callId, tool.name, key), execution.data)
        : failure(this.#context(callId, tool.name, key), execution.failure);
    } catch (error) {
      console.error("tool dispatch failed", tool.name, error);
      envelope = failure(this.#context(callId, tool.name, key), {
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
      }
      this.#store.completeTrace(seq, {
        ended_at: Date.now(),
        outcome: envelope.outcome,
        error_code: envelope.error?.code ?? null,
        upstream_status: upstreamStatus,
        replayed: false,
        attempts,
      });
    });
    if (key) {
      this.#inflight.delete(key);
      admission.settle(envelope);
    }
    return envelope;
  }
}
