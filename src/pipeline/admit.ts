import { APPROVAL_POLL_MS, APPROVAL_TTL_MS, type ApprovalRecord } from "../approvals/model";
import type { SideEffect, ToolSpec } from "../catalog/define-tool";
import { canonicalJson } from "../core/canonical-json";
import { newApprovalId } from "../core/ids";
import {
  type ApprovalBlock,
  type ApprovalState,
  type Envelope,
  type EnvelopeContext,
  type FailureSpec,
  failure,
} from "../wire/envelope";
import { budgetLeft, type Counters, canChargeCall, canSpendEffect, spendEffect } from "./budget";
import type { PreparedCall } from "./prepare";
import { completionOf } from "./record";
import type { CallRecord, NewTraceEntry, RunMeta, StoredRequest, Taint, TraceCompletion } from "./run-state";
import { externalId } from "./shape";

/**
 * Stage "admit": the run ledger's decisions as a pure state machine. Each function takes the run,
 * the call record of one idempotency key (and its approval) and an event, and returns the writes
 * the ledger must commit in one transaction and the answer. Nothing here stores, sends or awaits:
 * the Durable Object reads what a function asks for, applies its writes with `transactionSync`,
 * and sends the stored request when told to.
 *
 * A key's states and what moves it (E = the run refuses first: closed, past its deadline or out of
 * calls; a refusal for a key whose effect is known says so, see `knownEffect`):
 *
 * | key state    | agent's identical call                         | operator approves     | operator rejects | upstream outcome                  | can no longer execute |
 * | ------------ | ---------------------------------------------- | --------------------- | ---------------- | --------------------------------- | --------------------- |
 * | (none)       | effect budget spent → budget_exhausted;        |                       |                  |                                   |                       |
 * |              | needs a human → held + approval pending, wait; |                       |                  |                                   |                       |
 * |              | else spend, → sending, send                    |                       |                  |                                   |                       |
 * | held/pending | wait (approval_required)                       | spend, → sending, send | rejected        |                                   | approval expired, with why |
 * | held/rejected| approval_rejected (terminal)                   | conflict              | unchanged        |                                   |                       |
 * | held/expired | approval_expired, naming why (terminal)        | conflict              | conflict         |                                   |                       |
 * | sending      | in flight: join it; after a restart: resend    | unchanged             | conflict         | retryable → in_doubt, else completed |                    |
 * | in_doubt     | resend the stored bytes (no budget spent)      | unchanged             | conflict         | retryable → in_doubt, else completed |                    |
 * | completed    | replay the stored envelope                     | unchanged             | conflict         |                                   |                       |
 *
 * A pending approval "can no longer execute" when the run is ended, its deadline or the approval's
 * own window has passed, the policy it was asked under changed, or the run's budget for its side
 * effect is spent. An agent's identical call checks its own approval; `sweepApprovals` finds the
 * rest when an approval is decided, after every execution, when the run ends and on the ledger's
 * alarm, so an agent is told to wait only for an approval that can still run.
 */

/** What the ledger commits for one event, in order, in one transaction. */
export type Write =
  | { kind: "counters"; counters: Counters }
  | { kind: "close_run"; at: number }
  | { kind: "taint"; taint: Taint }
  | { kind: "trace_open"; entry: NewTraceEntry }
  | { kind: "trace_close"; call_id: string; completion: TraceCompletion }
  | { kind: "key_hold"; record: CallRecord; now: number }
  | {
      kind: "key_send";
      key: string;
      tool: string;
      side_effect: SideEffect;
      request: StoredRequest;
      now: number;
    }
  | {
      kind: "key_settle";
      key: string;
      state: "in_doubt" | "completed";
      envelope: Envelope | null;
      now: number;
    }
  | { kind: "approval_open"; approval: ApprovalRecord }
  | {
      kind: "approval_state";
      id: string;
      state: ApprovalState;
      decision: ApprovalDecisionRecord | null;
      result?: Envelope;
    };

/** Who decided an approval and why, as recorded; `by` is null when the proxy expired it itself. */
export interface ApprovalDecisionRecord {
  at: number;
  by: string | null;
  by_name: string | null;
  reason: string | null;
}

/** Everything the machine needs to know about one agent call, prepared by the earlier stages. */
export interface AgentCall {
  call_id: string;
  now: number;
  prepared: PreparedCall;
  /** Repeat detection: tool + canonical validated arguments (raw arguments when they did not validate). */
  digest: string;
  /** The idempotency key of a valid write or destructive call. */
  key: string | null;
  /** The upstream request this call would send, built from the validated arguments. */
  request: StoredRequest | null;
  /** The policy version the call is judged under (only when it needs a human). */
  policy_version: string | null;
  /** The arguments as the trace keeps them (sensitive fields masked). */
  trace_args: unknown;
}

/** What the ledger read for this call, in the same synchronous turn that applies the writes. */
export interface CallView {
  run: RunMeta;
  record: CallRecord | null;
  approval: ApprovalRecord | null;
  /** Earlier agent calls of the run with the same digest, this one excluded. */
  earlier_identical: number;
  open_approvals: number;
  max_open_approvals: number;
  /** Whether a request under this key is on its way from this instance right now. */
  inflight: boolean;
}

export type CallStep =
  | { kind: "answer"; writes: Write[]; envelope: Envelope }
  /** Send `request` (the stored bytes of `key`, or a read's request when `key` is null) and settle. */
  | { kind: "send"; writes: Write[]; key: string | null; request: StoredRequest | null; budget: Counters }
  /** An identical call under the same key is in flight: wait for its envelope. */
  | { kind: "join"; writes: Write[]; key: string };

export function context(
  run: RunMeta,
  callId: string,
  tool: string | null,
  key: string | null,
  counters: Counters,
  now: number,
  extra: Partial<EnvelopeContext> = {},
): EnvelopeContext {
  return {
    call_id: callId,
    environment: run.environment,
    tool,
    idempotency_key: key,
    budget: budgetLeft(run.limits, counters, run.deadline_at, now),
    ...extra,
  };
}

/**
 * What is known of the effect of a key when a call under it is refused: nothing happened (no record,
 * or it waits for a human), unknown (sent, fate unclear), or what the stored outcome says. A refusal
 * never claims "no effect" for a key whose effect happened.
 */
export function knownEffect(
  record: CallRecord | null,
): Pick<FailureSpec, "side_effect_confirmed" | "external_id"> & { observed: Record<string, unknown> | null } {
  if (!record || record.state === "held") return { side_effect_confirmed: false, observed: null };
  if (record.state !== "completed" || !record.envelope)
    return { side_effect_confirmed: null, observed: null };
  const stored = record.envelope;
  const confirmed = stored.outcome === "success" ? true : (stored.error?.side_effect_confirmed ?? null);
  return {
    side_effect_confirmed: confirmed,
    external_id: stored.error?.external_id ?? externalId(stored.data),
    observed: {
      stored_outcome: {
        call_id: stored.call_id,
        outcome: stored.outcome,
        data: stored.data,
        error_code: stored.error?.code ?? null,
      },
    },
  };
}

function answerWith(
  run: RunMeta,
  call: AgentCall,
  counters: Counters,
  writes: Write[],
  spec: FailureSpec,
  extra: { record?: CallRecord | null; approval?: ApprovalBlock | null } = {},
): CallStep {
  const known = extra.record === undefined ? null : knownEffect(extra.record);
  const envelope = failure(
    context(run, call.call_id, call.prepared.toolName, call.key, counters, call.now, {
      approval: extra.approval ?? null,
      observed_state: known?.observed ?? null,
    }),
    known
      ? {
          ...spec,
          side_effect_confirmed: known.side_effect_confirmed,
          external_id: known.external_id ?? spec.external_id ?? null,
        }
      : spec,
  );
  return finish(counters, run, writes, call, envelope);
}

function finish(
  counters: Counters,
  run: RunMeta,
  writes: Write[],
  call: AgentCall,
  envelope: Envelope,
): CallStep {
  if (counters !== run.counters) writes.push({ kind: "counters", counters });
  writes.push({ kind: "trace_close", call_id: call.call_id, completion: completionOf(envelope, call.now) });
  return { kind: "answer", writes, envelope };
}

/** Event "agent call": charge, refuse, replay, join, wait for a human, or send. */
export function admitCall(view: CallView, call: AgentCall): CallStep {
  const { run, record, approval } = view;
  const { prepared, now } = call;
  const tool = prepared.tool;
  const writes: Write[] = [
    {
      kind: "trace_open",
      entry: {
        call_id: call.call_id,
        actor: "agent",
        started_at: now,
        tool: prepared.toolName,
        side_effect: tool?.side_effect ?? null,
        args: call.trace_args,
        call_digest: call.digest,
        idempotency_key: call.key,
        catalog_version: run.catalog_version,
      },
    },
  ];
  let counters = run.counters;

  if (run.state === "closed") {
    return answerWith(
      run,
      call,
      counters,
      writes,
      { code: "run_closed", message: "This run has been ended; it accepts no more tool calls." },
      { record },
    );
  }
  const charge = canChargeCall(run.limits, counters, run.deadline_at, now);
  if (!charge.ok) {
    return answerWith(
      run,
      call,
      counters,
      writes,
      { code: "budget_exhausted", message: charge.message, details: { limit: charge.limit } },
      { record },
    );
  }
  counters = { ...counters, calls_used: counters.calls_used + 1 };
  if (prepared.refusal || !tool) {
    return answerWith(run, call, counters, writes, prepared.refusal ?? unknownTool(prepared.toolName));
  }

  if (view.earlier_identical >= run.repeat_threshold - 1) {
    return answerWith(
      run,
      call,
      counters,
      writes,
      {
        code: "repeat_detected",
        message: `This exact call was already made ${view.earlier_identical} times in this run; repeating it will not change the result. Stop and hand over to a human.`,
        details: { earlier_identical_calls: view.earlier_identical, threshold: run.repeat_threshold },
      },
      { record },
    );
  }

  if (call.key === null) {
    writes.push({ kind: "counters", counters });
    return { kind: "send", writes, key: null, request: call.request, budget: counters };
  }
  const key = call.key;
  if (call.request === null) {
    // The catalog refuses a write served without an upstream; this only guards the invariant.
    return answerWith(run, call, counters, writes, {
      code: "internal_error",
      message: `${tool.name} has no upstream request to send; it cannot run.`,
      recommended_next_action: "escalate_to_human",
    });
  }

  if (record?.state === "completed" && record.envelope) {
    const envelope: Envelope = {
      ...record.envelope,
      call_id: call.call_id,
      replayed: true,
      budget: budgetLeft(run.limits, counters, run.deadline_at, now),
    };
    return finish(counters, run, writes, call, envelope);
  }
  if (view.inflight) {
    writes.push({ kind: "counters", counters });
    return { kind: "join", writes, key };
  }
  if (record && record.state !== "held") {
    // Sent before and in doubt (or cut off by a restart): resending the stored bytes under the same
    // key is recovery, not a new effect, so it passes no gate and spends nothing.
    writes.push({ kind: "counters", counters });
    writes.push({
      kind: "key_send",
      key,
      tool: record.tool,
      side_effect: record.side_effect,
      request: record.request,
      now,
    });
    return { kind: "send", writes, key, request: record.request, budget: counters };
  }
  if (record && approval) {
    return waitOrFinal(view, call, counters, writes, approval, record);
  }

  // A new effect. It must be able to run now, budget first, before anyone is asked to approve it.
  const effect = canSpendEffect(tool.side_effect, run.limits, counters);
  if (!effect.ok) {
    return answerWith(run, call, counters, writes, {
      code: "budget_exhausted",
      message: effect.message,
      details: { limit: effect.limit },
    });
  }
  if (prepared.approval.required) {
    if (view.open_approvals >= view.max_open_approvals) {
      return answerWith(run, call, counters, writes, {
        code: "budget_exhausted",
        message: `This run already has ${view.max_open_approvals} approvals waiting; wait for a decision before asking for more.`,
        details: { limit: "max_open_approvals" },
      });
    }
    const opened = openApproval(run, call, tool, key);
    writes.push({ kind: "approval_open", approval: opened });
    writes.push({
      kind: "key_hold",
      record: {
        key,
        tool: tool.name,
        side_effect: tool.side_effect,
        state: "held",
        request: call.request,
        envelope: null,
        sends: 0,
      },
      now,
    });
    return answerWith(run, call, counters, writes, waitSpec(opened, tool.name), {
      approval: blockOf(opened),
    });
  }
  counters = spendEffect(tool.side_effect, counters);
  writes.push({ kind: "counters", counters });
  writes.push({
    kind: "key_send",
    key,
    tool: tool.name,
    side_effect: tool.side_effect,
    request: call.request,
    now,
  });
  return { kind: "send", writes, key, request: call.request, budget: counters };
}

function unknownTool(name: string | null): FailureSpec {
  return { code: "not_found", message: `There is no tool "${name ?? ""}" in this run's namespace.` };
}

function openApproval(run: RunMeta, call: AgentCall, tool: ToolSpec, key: string): ApprovalRecord {
  // An approval cannot outlive the run's deadline: after it, nothing of the run may execute.
  const expiresAt = Math.min(call.now + APPROVAL_TTL_MS, run.deadline_at);
  return {
    id: newApprovalId(),
    tenant: run.tenant,
    run_id: run.run_id,
    tool: tool.name,
    side_effect: tool.side_effect,
    idempotency_key: key,
    args: JSON.parse(canonicalJson(call.prepared.args)) as Record<string, unknown>,
    args_digest: call.digest,
    policy_version: call.policy_version ?? "",
    reasons: call.prepared.approval.reasons,
    state: "pending",
    requested_call_id: call.call_id,
    created_at: new Date(call.now).toISOString(),
    expires_at: new Date(expiresAt).toISOString(),
    decided_at: null,
    decided_by: null,
    decided_by_name: null,
    decision_reason: null,
    result: null,
  };
}

function blockOf(approval: Pick<ApprovalRecord, "id" | "state" | "expires_at">): ApprovalBlock {
  return { id: approval.id, state: approval.state, expires_at: approval.expires_at };
}

function waitSpec(approval: ApprovalRecord, tool: string): FailureSpec {
  return {
    code: "approval_required",
    message: `A human must approve this ${tool} call (${approval.reasons.join("; ")}). Wait, then make the identical call again to get its result.`,
    retry_after_ms: APPROVAL_POLL_MS,
    details: { approval_id: approval.id },
  };
}

export function expiredSpec(approval: Pick<ApprovalRecord, "id" | "decision_reason">): FailureSpec {
  const why = approval.decision_reason ?? "nobody decided in time";
  return {
    code: "approval_expired",
    message: `This call's approval can no longer be granted (${why}); it will not run. Ask a human how to proceed.`,
    details: { approval_id: approval.id, reason: why },
  };
}

/** The identical call of a key that waits for (or was refused by) a human. */
function waitOrFinal(
  view: CallView,
  call: AgentCall,
  counters: Counters,
  writes: Write[],
  approval: ApprovalRecord,
  record: CallRecord,
): CallStep {
  const { run } = view;
  const block = blockOf(approval);
  switch (approval.state) {
    case "pending": {
      const why = whyCannotExecute(run, counters, approval, call.now, call.policy_version);
      if (why) {
        writes.push(expireWrite(approval.id, why, call.now));
        return answerWith(
          run,
          call,
          counters,
          writes,
          expiredSpec({ id: approval.id, decision_reason: why }),
          { approval: { ...block, state: "expired" }, record },
        );
      }
      // Asking again is what the agent was told to do: charged like any call, never a repeat.
      return answerWith(run, call, counters, writes, waitSpec(approval, record.tool), { approval: block });
    }
    case "rejected":
      return answerWith(
        run,
        call,
        counters,
        writes,
        {
          code: "approval_rejected",
          message: `An operator rejected this call${approval.decision_reason ? `: ${approval.decision_reason}` : "."} Do not retry it.`,
          details: { approval_id: approval.id, reason: approval.decision_reason },
        },
        { approval: block, record },
      );
    case "expired":
      return answerWith(run, call, counters, writes, expiredSpec(approval), { approval: block, record });
    case "approved":
    case "executed":
      // An approved key is never held (approving moves it to sending); kept total for safety.
      return answerWith(run, call, counters, writes, waitSpec(approval, record.tool), { approval: block });
  }
}

function expireWrite(id: string, why: string, now: number): Write {
  return {
    kind: "approval_state",
    id,
    state: "expired",
    decision: { at: now, by: null, by_name: null, reason: why },
  };
}

/**
 * Why a pending approval can no longer execute, or null when it still can: the one rule behind
 * "no dead ends", used when an agent asks again, when an operator decides and by the sweep.
 */
export function whyCannotExecute(
  run: RunMeta,
  counters: Counters,
  approval: Pick<ApprovalRecord, "side_effect" | "expires_at" | "policy_version">,
  now: number,
  policyVersion: string | null,
): string | null {
  if (run.state === "closed") return "the run was ended";
  if (now >= run.deadline_at) return "the run passed its deadline";
  if (Date.parse(approval.expires_at) <= now) return "nobody decided within the approval window";
  if (policyVersion !== null && approval.policy_version !== policyVersion) {
    return "the policy changed since it was requested";
  }
  const effect = canSpendEffect(approval.side_effect as SideEffect, run.limits, counters);
  if (!effect.ok) return `the run's ${effect.limit} budget is spent`;
  return null;
}

/** Event "time passes, the run ends or a budget is spent": every pending approval that can no longer execute expires. */
export function sweepApprovals(
  run: RunMeta,
  pending: readonly ApprovalRecord[],
  now: number,
  policyVersion: string | null,
): Write[] {
  const writes: Write[] = [];
  for (const approval of pending) {
    if (approval.state !== "pending") continue;
    const why = whyCannotExecute(run, run.counters, approval, now, policyVersion);
    if (why) writes.push(expireWrite(approval.id, why, now));
  }
  return writes;
}

/** Event "the run is ended". */
export function endRun(run: RunMeta, pending: readonly ApprovalRecord[], now: number): Write[] {
  if (run.state === "closed") return [];
  return [{ kind: "close_run", at: now }, ...sweepApprovals({ ...run, state: "closed" }, pending, now, null)];
}

export interface Decision {
  decision: "approve" | "reject";
  operator: string;
  /** The operator's display name from OPERATOR_KEYS, recorded with the decision and the execution. */
  operator_name: string | null;
  reason: string | null;
  call_id: string;
  now: number;
  policy_version: string;
}

export type DecideStep =
  | {
      kind: "done";
      writes: Write[];
      refusal: { code: "not_found" | "conflict_error"; message: string } | null;
    }
  | { kind: "send"; writes: Write[]; key: string; request: StoredRequest; tool: string };

/**
 * Event "an operator decides". Deciding a decided approval the same way again changes nothing; the
 * other way is a conflict. Approving spends the run's effect budget now (the cap counts executions)
 * and sends the key's stored request: the same bytes the agent's call would send.
 */
export function decideApproval(
  run: RunMeta,
  approval: ApprovalRecord | null,
  record: CallRecord | null,
  tool: ToolSpec | undefined,
  decision: Decision,
  pending: readonly ApprovalRecord[] = [],
): DecideStep {
  if (!approval)
    return { kind: "done", writes: [], refusal: { code: "not_found", message: "No such approval." } };
  if (approval.state !== "pending") {
    const same = decision.decision === "approve" ? ["approved", "executed"] : ["rejected"];
    return same.includes(approval.state)
      ? { kind: "done", writes: [], refusal: null }
      : {
          kind: "done",
          writes: [],
          refusal: {
            code: "conflict_error",
            message: `This approval is already ${approval.state}${approval.decision_reason && approval.state === "expired" ? ` (${approval.decision_reason})` : ""}.`,
          },
        };
  }
  const why = whyCannotExecute(run, run.counters, approval, decision.now, decision.policy_version);
  if (why) {
    return {
      kind: "done",
      writes: [expireWrite(approval.id, why, decision.now)],
      refusal: { code: "conflict_error", message: `This approval can no longer be granted: ${why}.` },
    };
  }
  const decided: ApprovalDecisionRecord = {
    at: decision.now,
    by: decision.operator,
    by_name: decision.operator_name,
    reason: decision.reason,
  };
  if (decision.decision === "reject") {
    return {
      kind: "done",
      writes: [{ kind: "approval_state", id: approval.id, state: "rejected", decision: decided }],
      refusal: null,
    };
  }
  if (!tool) {
    return {
      kind: "done",
      writes: [],
      refusal: { code: "conflict_error", message: "The tool no longer exists." },
    };
  }
  if (!record) {
    return {
      kind: "done",
      writes: [],
      refusal: {
        code: "conflict_error",
        message: "This approval's request was not kept; ask the agent to make the call again.",
      },
    };
  }
  const counters = spendEffect(tool.side_effect, run.counters);
  return {
    kind: "send",
    key: record.key,
    request: record.request,
    tool: tool.name,
    writes: [
      { kind: "approval_state", id: approval.id, state: "approved", decision: decided },
      { kind: "counters", counters },
      {
        kind: "key_send",
        key: record.key,
        tool: record.tool,
        side_effect: record.side_effect,
        request: record.request,
        now: decision.now,
      },
      {
        kind: "trace_open",
        entry: {
          call_id: decision.call_id,
          actor: decision.operator,
          actor_name: decision.operator_name,
          started_at: decision.now,
          tool: tool.name,
          side_effect: tool.side_effect,
          args: approval.args,
          call_digest: approval.args_digest,
          idempotency_key: record.key,
          catalog_version: run.catalog_version,
        },
      },
      // This execution may spend the budget other pending approvals need: they expire now, not
      // when someone next looks at them.
      ...sweepApprovals(
        { ...run, counters },
        pending.filter((other) => other.id !== approval.id),
        decision.now,
        decision.policy_version,
      ),
    ],
  };
}

/**
 * Event "the upstream answered" (or the dispatch ended without an answer) for a call that was sent.
 * A retryable failure leaves the key in doubt, so the next identical call resends the stored bytes;
 * anything else completes it. An approved key is executed once its outcome is known, whoever sent it.
 */
export function settleCall(
  key: string | null,
  approval: ApprovalRecord | null,
  envelope: Envelope,
  completion: TraceCompletion,
  callId: string,
  taint: Taint | null = null,
): Write[] {
  const writes: Write[] = taint ? [{ kind: "taint", taint }] : [];
  if (key !== null) {
    const state = envelope.outcome === "retryable_failure" ? "in_doubt" : "completed";
    writes.push({
      kind: "key_settle",
      key,
      state,
      envelope: state === "completed" ? envelope : null,
      now: completion.ended_at,
    });
    if (approval?.state === "approved" && state === "completed") {
      writes.push({
        kind: "approval_state",
        id: approval.id,
        state: "executed",
        decision: null,
        result: envelope,
      });
    }
  }
  writes.push({ kind: "trace_close", call_id: callId, completion });
  return writes;
}

/** Event "an identical call in flight answered": the joiner's copy of that envelope. */
export function joinedAnswer(
  run: RunMeta,
  envelope: Envelope,
  callId: string,
  now: number,
): { envelope: Envelope; writes: Write[] } {
  const out: Envelope = {
    ...envelope,
    call_id: callId,
    replayed: true,
    budget: budgetLeft(run.limits, run.counters, run.deadline_at, now),
  };
  return {
    envelope: out,
    writes: [{ kind: "trace_close", call_id: callId, completion: completionOf(out, now) }],
  };
}
