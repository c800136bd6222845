import { ANY_OPERATOR } from "../approvals/approvers";
import {
  APPROVAL_TTL_MS,
  type ApprovalRecord,
  approvalBlock,
  approvalUserOf,
  slaDueAt,
} from "../approvals/model";
import type { CurrentPolicy } from "../approvals/policy-version";
import type { ToolSpec } from "../catalog/define-tool";
import { canonicalJson } from "../core/canonical-json";
import { newApprovalId } from "../core/ids";
import type { TraceParent } from "../core/trace-context";
import { knownEffect } from "../effects/known-effect";
import { crossRunReasons, effectsToConfirm, type TenantCheck } from "../effects/reasons";
import type { CapLimit } from "../wire/effects";
import { type ApprovalBlock, type Envelope, type FailureSpec, failure } from "../wire/envelope";
import { context, expiredSpec, rejectedSpec, waitSpec } from "./answers";
import { budgetLeft, type Counters, canChargeCall, canSpendEffect, spendEffect } from "./budget";
import { callAgainSentence, inDoubtRuleOf } from "./in-doubt";
import { chargedPollRefusal, pollPrice } from "./poll-price";
import type { PreparedCall, ValidCall } from "./prepare";
import { completionOf } from "./record";
import type { CallRecord, RunMeta, StoredRequest } from "./run-state";
import type { ToolPins } from "./tool-pins";
import { expireWrite, type KeyToSend, sendKey, type Write, whyCannotExecute } from "./writes";

/**
 * Stage "admit": the admission machine's event "an agent calls". It takes the run, the call record
 * of one idempotency key (and its approval), the run's pending approvals and the call, and returns
 * every write the ledger must commit in one transaction, and what to do next. Nothing here stores,
 * sends or awaits.
 *
 * The key states it moves between are in `writes.ts`.
 *
 * A pending approval "can no longer execute" when the run is ended, its deadline or the approval's
 * own window has passed, the policy it was asked under changed, or the run's budget for its side
 * effect is spent (`whyCannotExecute`). An agent's identical call checks its own approval; the
 * sweep finds the rest whenever a key is sent or settled, an approval is decided, the run ends or
 * the ledger's alarm rings, so an agent is told to wait only for an approval that can still run.
 */

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
  /** That policy and what it is made of (`approvals/policy-version.ts`), when the caller knows it. */
  policy?: CurrentPolicy | null;
  /** The called tool's version, when the run pins it with this call (its first call of the tool). */
  pins?: ToolPins | null;
  /** The arguments as the trace keeps them (sensitive fields masked). */
  trace_args: unknown;
  /** The caller's W3C trace context, or null (absent or malformed: the call starts its own span in the run's trace). */
  traceparent?: TraceParent | null;
  /** The call waits for a pending approval's decision at the proxy (`Prefer: wait`): a poll of it is free. */
  waits?: boolean;
}

/** What the ledger read for this call, in the same synchronous turn that applies the writes. */
export interface CallView {
  run: RunMeta;
  record: CallRecord | null;
  approval: ApprovalRecord | null;
  /**
   * The run's pending approvals, read for a keyed call only: a read neither opens an approval nor
   * spends a budget one needs. A new one counts against the cap while open; a send expires those it
   * leaves without budget.
   */
  pending: readonly ApprovalRecord[];
  /** Earlier agent calls of the run with the same digest, this one excluded. */
  earlier_identical: number;
  /** Earlier polls of this call's pending approval (read only for a key held for one). */
  polls_before?: number;
  max_open_approvals: number;
  /** The tenant's approval SLA, for tools that declare none; absent or null: no SLA. */
  approval_sla_ms?: number | null;
  /** Whether a request under this key is on its way from this instance right now. */
  inflight: boolean;
  /**
   * What the tenant-wide step found for this call as a new effect (other runs' effects on the same
   * identity, a tenant cap it would exceed), with the run's own cap checked against the run's
   * claims in this turn; null when the call claimed nothing (a read, a key already recorded).
   */
  claim: { check: TenantCheck; run_over: CapLimit | null } | null;
}

export type CallStep =
  | { kind: "answer"; writes: Write[]; envelope: Envelope }
  /**
   * Send `request` (the stored bytes of `key`, or a read's request when `key` is null; null for a
   * tool the proxy answers itself) and settle.
   */
  | {
      kind: "send";
      writes: Write[];
      tool: ToolSpec;
      /** The validated arguments, which shaping and the postcondition read. */
      args: Record<string, unknown>;
      key: string | null;
      request: StoredRequest | null;
      budget: Counters;
      /**
       * Set for a resend to an upstream that ignores keys: its settling read goes first, and what
       * it finds made since this time (the key's first record) decides whether anything is sent.
       */
      settle_first_since?: number;
    }
  /** An identical call under the same key is in flight: wait for its envelope. */
  | { kind: "join"; writes: Write[]; key: string };

/** One call's admission so far: what it read, what it will write, and the counters as charged. */
interface Turn {
  view: CallView;
  call: AgentCall;
  writes: Write[];
  counters: Counters;
}

/** Event "agent call": charge, refuse, replay, join, wait for a human, or send. */
export function admitCall(view: CallView, call: AgentCall): CallStep {
  const pins: Write[] = call.pins ? [{ kind: "tool_pins", pins: call.pins }] : [];
  const opened: Turn = { view, call, writes: [traceOpen(view, call), ...pins], counters: view.run.counters };
  const poll = pollOf(opened);
  if (poll) return poll;
  const runRefusal = refuseForRun(opened);
  if (runRefusal) return runRefusal;
  const turn = { ...opened, counters: { ...opened.counters, calls_used: opened.counters.calls_used + 1 } };
  const { prepared } = call;
  // A refusal with a key (the run's taint refusing a valid write) says what that key already made.
  if (prepared.refusal !== null) {
    return answerWith(turn, prepared.refusal, call.key === null ? {} : { record: turn.view.record });
  }
  return refuseRepeat(turn) ?? admitValid(turn, prepared);
}

function traceOpen({ run, claim }: CallView, call: AgentCall): Write {
  return {
    kind: "trace_open",
    entry: {
      call_id: call.call_id,
      actor: "agent",
      started_at: call.now,
      tool: call.prepared.toolName,
      side_effect: call.prepared.tool?.side_effect ?? null,
      args: call.trace_args,
      call_digest: call.digest,
      idempotency_key: call.key,
      catalog_version: run.catalog_version,
      claim_ms: claim?.check.ms ?? null,
      ...(call.prepared.via ? { via: call.prepared.via } : {}),
      ...(call.traceparent ? { traceparent: call.traceparent } : {}),
    },
  };
}

/**
 * A poll: the identical call of a key that waits for a human, while its approval is pending. Asking
 * again is what the agent was told to do, so it is never a repeat, and a patient poll costs no call
 * budget; one sooner than the hint, or past the free polls, is charged as a call (`poll-price.ts`)
 * and, with the run's calls spent, refused. The trace marks it a poll, and a charged one so. It is
 * answered like any wait: the approval as it stands, or its expiry if it can no longer execute.
 */
function pollOf(turn: Turn): CallStep | null {
  const { view, call } = turn;
  const { record, approval, run } = view;
  if (call.prepared.refusal !== null || call.key === null || view.inflight) return null;
  if (record?.state !== "held" || approval?.state !== "pending" || run.state === "closed") return null;
  const [open] = turn.writes;
  if (open?.kind === "trace_open") open.entry.poll = true;
  const price = pollPrice({
    polls_before: view.polls_before ?? 0,
    asked_at: Date.parse(approval.created_at),
    now: call.now,
    waits: call.waits === true,
  });
  if (!price.charged) return waitOrFinal(turn, approval, record);
  if (open?.kind === "trace_open") open.entry.poll_charged = true;
  if (turn.counters.calls_used >= run.limits.max_calls) {
    return answerWith(turn, chargedPollRefusal(run.limits.max_calls, price.why), {
      record,
      approval: approvalBlock(approval),
    });
  }
  const charged = { ...turn.counters, calls_used: turn.counters.calls_used + 1 };
  return waitOrFinal({ ...turn, counters: charged }, approval, record);
}

/** E: a closed run, a passed deadline or spent calls refuse before anything is charged. */
function refuseForRun(turn: Turn): CallStep | null {
  const { run, record } = turn.view;
  if (run.state === "closed") {
    return answerWith(
      turn,
      { code: "run_closed", message: "This run has been ended; it accepts no more tool calls." },
      { record },
    );
  }
  const charge = canChargeCall(run.limits, turn.counters, run.deadline_at, turn.call.now);
  if (charge.ok) return null;
  return answerWith(
    turn,
    { code: "budget_exhausted", message: charge.message, details: { limit: charge.limit } },
    { record },
  );
}

function refuseRepeat(turn: Turn): CallStep | null {
  const { run, earlier_identical, record } = turn.view;
  if (earlier_identical < run.repeat_threshold - 1) return null;
  return answerWith(
    turn,
    {
      code: "repeat_detected",
      message: `This exact call was already made ${earlier_identical} times in this run; repeating it will not change the result. Stop and hand over to a human.`,
      details: { earlier_identical_calls: earlier_identical, threshold: run.repeat_threshold },
    },
    { record },
  );
}

/** A call that passed every earlier stage: by what its key already holds, or as a new effect. */
function admitValid(turn: Turn, prepared: ValidCall): CallStep {
  const { call, view, writes, counters } = turn;
  if (call.key === null) {
    writes.push({ kind: "counters", counters });
    const { tool, args } = prepared;
    return { kind: "send", writes, tool, args, key: null, request: call.request, budget: counters };
  }
  if (call.request === null) {
    // The catalog refuses a write served without an upstream; this only guards the invariant.
    return answerWith(turn, {
      code: "internal_error",
      message: `${prepared.tool.name} has no upstream request to send; it cannot run.`,
      recommended_next_action: "escalate_to_human",
    });
  }
  const { record, approval } = view;
  if (record?.state === "completed" && record.envelope) return replay(turn, record.envelope);
  if (view.inflight) {
    writes.push({ kind: "counters", counters });
    return { kind: "join", writes, key: call.key };
  }
  // Sent before and in doubt (or cut off by a restart): resending the stored bytes under the same
  // key is recovery, not a new effect, so it passes no gate and spends nothing. Unless the upstream
  // does not honour keys: then a resend could act twice, and the doubt is answered, never resent.
  if (record && record.state !== "held") {
    switch (inDoubtRuleOf(prepared.tool)) {
      case "resend_under_key":
        return send(turn, prepared, record, counters);
      case "settle_by_read":
        // A resend only once a read shows the effect absent; the read goes first, with the send.
        return send(turn, prepared, record, counters, record.recorded_at ?? turn.view.run.created_at);
      case "reconcile":
        return stillInDoubt(turn, prepared.tool, record);
    }
  }
  if (record && approval) return waitOrFinal(turn, approval, record);
  return admitNewEffect(turn, prepared, call.key, call.request);
}

function replay(turn: Turn, stored: Envelope): CallStep {
  const { run } = turn.view;
  return finish(turn, {
    ...stored,
    call_id: turn.call.call_id,
    replayed: true,
    budget: budgetLeft(run.limits, turn.counters, run.deadline_at, turn.call.now),
  });
}

/** A new effect. It must be able to run now, budget first, before anyone is asked to approve it. */
function admitNewEffect(turn: Turn, prepared: ValidCall, key: string, request: StoredRequest): CallStep {
  const { view, counters } = turn;
  const { tool } = prepared;
  const effect = canSpendEffect(tool.side_effect, view.run.limits, counters);
  if (!effect.ok) {
    return answerWith(turn, {
      code: "budget_exhausted",
      message: effect.message,
      details: { limit: effect.limit },
    });
  }
  const cross = crossRun(view);
  if (view.claim) {
    const { check } = view.claim;
    turn.writes.push({
      kind: "effect_claim",
      key,
      shards: check.shards,
      value: check.claim.value,
      over_cap: cross.limit !== null,
    });
  }
  if (prepared.approval.required || cross.earlier_effects.length > 0 || cross.limit) {
    return holdForHuman(turn, prepared, key, request, cross);
  }
  const record = { key, tool: tool.name, side_effect: tool.side_effect, request };
  return send(turn, prepared, record, spendEffect(tool.side_effect, counters));
}

/**
 * What other runs and the value caps add to a new effect's admission: the earlier effects a human
 * must see (none when the tenant lets the tool repeat), and the first cap it would exceed.
 */
function crossRun(view: CallView): Pick<ApprovalRecord, "earlier_effects" | "limit"> {
  if (!view.claim) return { earlier_effects: [], limit: null };
  const { check, run_over } = view.claim;
  return { earlier_effects: effectsToConfirm(check), limit: run_over ?? check.over };
}

/** The answer to a repeat of a write in doubt that is never resent: the doubt, and how to settle it. */
function stillInDoubt(turn: Turn, tool: ToolSpec, record: CallRecord): CallStep {
  if (record.envelope) return replay(turn, record.envelope);
  return answerWith(turn, {
    code: "terminal_error",
    message: `An earlier attempt of this call was cut off and may have acted. ${callAgainSentence(tool)}`,
    side_effect_confirmed: null,
    recommended_next_action: "reconcile",
    outcome: "terminal_failure",
    details: { resend: "never: the server does not honour idempotency keys" },
  });
}

function send(
  turn: Turn,
  { tool, args }: ValidCall,
  record: KeyToSend,
  counters: Counters,
  settleFirstSince?: number,
): CallStep {
  const { view, call, writes } = turn;
  writes.push(...sendKey(view.run, record, counters, view.pending, call.now, null));
  const step = {
    kind: "send" as const,
    writes,
    tool,
    args,
    key: record.key,
    request: record.request,
    budget: counters,
  };
  return settleFirstSince === undefined ? step : { ...step, settle_first_since: settleFirstSince };
}

function holdForHuman(
  turn: Turn,
  prepared: ValidCall,
  key: string,
  request: StoredRequest,
  cross: Pick<ApprovalRecord, "earlier_effects" | "limit">,
): CallStep {
  const { view, call, writes } = turn;
  const open = view.pending.filter((approval) => Date.parse(approval.expires_at) > call.now).length;
  if (open >= view.max_open_approvals) {
    return answerWith(turn, {
      code: "budget_exhausted",
      message: `This run already has ${view.max_open_approvals} approvals waiting; wait for a decision before asking for more.`,
      details: { limit: "max_open_approvals" },
    });
  }
  const { tool } = prepared;
  const slaMs = prepared.tool.approval_sla_ms ?? view.approval_sla_ms ?? null;
  const opened = openApproval(view.run, call, prepared, key, cross, slaMs);
  writes.push({ kind: "approval_open", approval: opened });
  writes.push({
    kind: "key_hold",
    record: {
      key,
      tool: tool.name,
      side_effect: tool.side_effect,
      state: "held",
      request,
      envelope: null,
      sends: 0,
    },
    now: call.now,
  });
  return answerWith(turn, waitSpec(opened, tool.name), { approval: approvalBlock(opened) });
}

function openApproval(
  run: RunMeta,
  call: AgentCall,
  prepared: ValidCall,
  key: string,
  cross: Pick<ApprovalRecord, "earlier_effects" | "limit">,
  slaMs: number | null,
): ApprovalRecord {
  const { tool } = prepared;
  // An approval cannot outlive the run's deadline: after it, nothing of the run may execute.
  const expiresAt = Math.min(call.now + APPROVAL_TTL_MS, run.deadline_at);
  const dueAt = slaDueAt(call.now, expiresAt, slaMs);
  return {
    id: newApprovalId(),
    tenant: run.tenant,
    run_id: run.run_id,
    tool: tool.name,
    side_effect: tool.side_effect,
    idempotency_key: key,
    args: JSON.parse(canonicalJson(prepared.args)) as Record<string, unknown>,
    args_digest: call.digest,
    policy_version: call.policy_version ?? "",
    policy_binding: call.policy?.binding ?? null,
    reasons: [...prepared.approval.reasons, ...crossRunReasons(cross.earlier_effects, cross.limit)],
    state: "pending",
    execution: null,
    requested_call_id: call.call_id,
    created_at: new Date(call.now).toISOString(),
    expires_at: new Date(expiresAt).toISOString(),
    sla_due_at: dueAt === null ? null : new Date(dueAt).toISOString(),
    overdue: false,
    escalated_at: null,
    decided_at: null,
    decided_by: null,
    decided_by_name: null,
    decision_reason: null,
    result: null,
    earlier_effects: cross.earlier_effects,
    limit: cross.limit,
    approver_roles: [...(prepared.approval.approvers ?? ANY_OPERATOR).roles],
    approvals_required: (prepared.approval.approvers ?? ANY_OPERATOR).approvals,
    approvers: [],
    user: approvalUserOf(run.user),
    edit: null,
  };
}

/** The identical call of a key that waits for (or was refused by) a human. */
function waitOrFinal(turn: Turn, approval: ApprovalRecord, record: CallRecord): CallStep {
  const { view, call, writes } = turn;
  const block = approvalBlock(approval);
  switch (approval.state) {
    case "pending": {
      const policy = call.policy ? new Map([[approval.tool, call.policy]]) : call.policy_version;
      const why = whyCannotExecute(view.run, turn.counters, approval, call.now, policy);
      if (why) {
        writes.push(expireWrite(approval.id, why, call.now));
        return answerWith(turn, expiredSpec({ id: approval.id, decision_reason: why }), {
          approval: { ...block, state: "expired" },
          record,
        });
      }
      // Asking again is what the agent was told to do: a poll (`pollOf`), never a repeat.
      return answerWith(turn, waitSpec(approval, record.tool), { approval: block });
    }
    case "rejected":
      return answerWith(turn, rejectedSpec(approval), { approval: block, record });
    case "expired":
      return answerWith(turn, expiredSpec(approval), { approval: block, record });
    case "approved":
    case "executed":
      // An approved key is never held (approving moves it to sending); kept total for safety.
      return answerWith(turn, waitSpec(approval, record.tool), { approval: block });
  }
}

function answerWith(
  turn: Turn,
  spec: FailureSpec,
  extra: { record?: CallRecord | null; approval?: ApprovalBlock | null } = {},
): CallStep {
  const { view, call, counters } = turn;
  const known = extra.record === undefined ? null : knownEffect(extra.record);
  const envelope = failure(
    context(view.run, call.call_id, call.prepared.toolName, call.key, counters, call.now, {
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
  return finish(turn, envelope);
}

function finish(turn: Turn, envelope: Envelope): CallStep {
  const { view, call, writes, counters } = turn;
  if (counters !== view.run.counters) writes.push({ kind: "counters", counters });
  writes.push({ kind: "trace_close", call_id: call.call_id, completion: completionOf(envelope, call.now) });
  return { kind: "answer", writes, envelope };
}
