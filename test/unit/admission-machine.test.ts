import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  APPROVAL_POLL_MS,
  APPROVAL_TTL_MS,
  type ApprovalRecord,
  approvalBlock,
} from "../../src/approvals/model";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { DEFAULT_LIMITS, tenantConfigSchema } from "../../src/config/tenants";
import { canonicalJson } from "../../src/core/canonical-json";
import { knownEffect } from "../../src/effects/known-effect";
import { type AgentCall, admitCall, type CallStep, type CallView } from "../../src/machine/admit";
import { context } from "../../src/machine/answers";
import type { Counters } from "../../src/machine/budget";
import { type DecideStep, type Decision, decideApproval } from "../../src/machine/decide";
import { FREE_POLLS_PER_APPROVAL } from "../../src/machine/poll-price";
import { prepareCall } from "../../src/machine/prepare";
import { completionOf } from "../../src/machine/record";
import { buildRequest } from "../../src/machine/request";
import { alarmRings, endRun } from "../../src/machine/run-events";
import type {
  CallRecord,
  KeyState,
  RunMeta,
  StoredRequest,
  Taint,
  TraceCompletion,
} from "../../src/machine/run-state";
import { joinedAnswer, settleSend } from "../../src/machine/settle";
import { sweepApprovals, type Write, whyCannotExecute } from "../../src/machine/writes";
import { catalog } from "../../src/tools";
import { type Envelope, failure, success } from "../../src/wire/envelope";
import type { RunLimits } from "../../src/wire/run-status";
import { propertyPlans } from "../property-plan";
import { pendingApproval } from "./support/pending-approval";

const plan = propertyPlans(process.env);

/**
 * Unit tests of the admission machine (`src/machine/`: `admit.ts`, `decide.ts`, `settle.ts`,
 * `run-events.ts` and their vocabulary `writes.ts`): no HTTP, no Durable Object. Runs,
 * call records and approvals are built by hand; agent calls go through the real `prepareCall` with
 * the demo catalog, so tools, side effects and approval needs are the product's own. The last block
 * is a seeded fast-check property over random event sequences applied to an in-memory model of the
 * ledger's tables (`applyWrites` mimics `src/ledger/commit.ts`).
 */

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const NOW = T0 + 1_000;
/** When a first poll of an approval asked at T0 keeps the hint's pace: free. */
const PATIENT = T0 + APPROVAL_POLL_MS;
const POLICY = "pol_current";
const OLD_POLICY = "pol_previous";
const ZERO: Counters = { calls_used: 0, writes_used: 0, destructive_used: 0 };

/** Every refund above 10.00 waits for a human; smaller ones are auto-approved. */
const TENANT = tenantConfigSchema().parse({
  namespaces: ["support"],
  ceilings: DEFAULT_LIMITS,
  max_refund_cents: 100_000,
  auto_approve_refund_cents: 1_000,
});

type Args = Record<string, unknown>;

const READ: [string, Args] = ["lookup_order", { order_id: "A1001" }];
const TICKET: [string, Args] = [
  "create_internal_ticket",
  { customer_id: "C100", priority: "normal", summary: "Customer asks about a late parcel" },
];
const URGENT_TICKET: [string, Args] = [
  "create_internal_ticket",
  { customer_id: "C101", priority: "urgent", summary: "Card charged twice, customer is upset" },
];
const REFUND: [string, Args] = [
  "issue_refund",
  { order_id: "A1001", amount_cents: 1999, reason: "out_of_stock" },
];
const OTHER_REFUND: [string, Args] = [
  "issue_refund",
  { order_id: "A1002", amount_cents: 2999, reason: "user_cancel" },
];
const SMALL_REFUND: [string, Args] = [
  "issue_refund",
  { order_id: "A1003", amount_cents: 500, reason: "price_error" },
];
const EMAIL: [string, Args] = [
  "send_customer_email",
  { draft_id: "dr_4Fz0aQ9mW2xYc7Lp1Rt8Vb", draft_version: 1 },
];
const INVALID: [string, Args] = ["issue_refund", { orderId: "A1001", amount_cents: "19.99" }];

let callCounter = 0;
function nextCallId(): string {
  callCounter += 1;
  return `call_${String(callCounter).padStart(6, "0")}`;
}

/** An agent call as `intakeCall` makes it, with a deterministic key and digest. */
function agentCall(
  [tool, args]: [string, Args],
  opts: { call_id?: string; now?: number; policy_version?: string } = {},
): AgentCall {
  const call_id = opts.call_id ?? nextCallId();
  const prepared = prepareCall(
    catalog,
    "support",
    { ok: true, tool, args },
    { tenantId: "acme", tenant: TENANT },
  );
  const spec = prepared.tool;
  const valid = spec !== null && prepared.args !== null;
  const key = valid && spec.side_effect !== "read" ? `idk_${tool}_${canonicalJson(prepared.args)}` : null;
  return {
    call_id,
    now: opts.now ?? NOW,
    prepared,
    digest: `dig_${canonicalJson([tool, prepared.args ?? args])}`,
    key,
    request: valid && prepared.args ? buildRequest(spec, prepared.args, { key, callId: call_id }) : null,
    // As the ledger prepares it: every keyed call is judged under the current policy.
    policy_version: key ? (opts.policy_version ?? POLICY) : null,
    trace_args: prepared.args ?? args,
  };
}

function keyOf(call: AgentCall): string {
  if (call.key === null) throw new Error("this call has no idempotency key");
  return call.key;
}

function runMeta(overrides: Partial<RunMeta> = {}): RunMeta {
  return {
    tenant: "acme",
    run_id: "run_machine",
    namespace: "support",
    environment: "sandbox",
    catalog_version: "cat_test",
    limits: DEFAULT_LIMITS,
    repeat_threshold: 3,
    state: "open",
    created_at: T0,
    deadline_at: T0 + DEFAULT_LIMITS.deadline_s * 1000,
    ended_at: null,
    counters: ZERO,
    fence_marker: "fence0000000",
    tainted_by: null,
    ...overrides,
  };
}

function viewOf(run: RunMeta, extra: Partial<CallView> = {}): CallView {
  return {
    run,
    record: null,
    approval: null,
    pending: [],
    earlier_identical: 0,
    max_open_approvals: 3,
    inflight: false,
    claim: null,
    ...extra,
  };
}

/** The request stored under a key by its first call: other bytes than a later call would build. */
function storedRequestOf(call: AgentCall): StoredRequest {
  const { tool, args } = call.prepared;
  if (!tool || !args) throw new Error("an invalid call stores no request");
  return buildRequest(tool, args, { key: call.key, callId: "call_first" });
}

function recordOf(call: AgentCall, state: KeyState, envelope: Envelope | null = null): CallRecord {
  const tool = call.prepared.tool;
  if (!tool) throw new Error("no tool");
  return {
    key: keyOf(call),
    tool: tool.name,
    side_effect: tool.side_effect,
    state,
    request: storedRequestOf(call),
    envelope,
    sends: state === "held" ? 0 : 1,
  };
}

function approvalOf(call: AgentCall, overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  const tool = call.prepared.tool;
  if (!tool) throw new Error("no tool");
  const approval = pendingApproval({
    tool,
    run_id: "run_machine",
    key: keyOf(call),
    args: call.prepared.args ?? {},
    digest: call.digest,
    policy: POLICY,
    requirement: { roles: [], approvals: 1 },
    t0: T0,
    reasons: call.prepared.approval.reasons,
    ttl_ms: 60_000,
  });
  return { ...approval, ...overrides };
}

const REFUND_DATA = { refund_id: "rf_0001", order_id: "A1001", amount_cents: 1999, status: "issued" };

type UpstreamOutcome = "success" | "retryable" | "terminal";

/** What the dispatch stage would produce for a sent call. */
function upstreamEnvelope(
  run: RunMeta,
  callId: string,
  key: string | null,
  outcome: UpstreamOutcome,
): Envelope {
  const ctx = context(run, callId, "issue_refund", key, run.counters, NOW);
  switch (outcome) {
    case "success":
      return success(ctx, REFUND_DATA);
    case "retryable":
      return failure(ctx, {
        code: "timeout",
        message: "The payments API did not answer in time.",
        side_effect_confirmed: null,
      });
    case "terminal":
      return failure(ctx, {
        code: "conflict_error",
        message: "The payments API refused the refund.",
        side_effect_confirmed: false,
        external_id: "rf_refused",
      });
  }
}

function decision(kind: "approve" | "reject", overrides: Partial<Decision> = {}): Decision {
  return {
    decision: kind,
    operator: "operator:ops1",
    operator_name: "Dana Reyes",
    operator_roles: ["support_lead"],
    reason: kind === "reject" ? "not covered by the policy" : null,
    call_id: "call_operator",
    now: NOW,
    policy_version: POLICY,
    ...overrides,
  };
}

function answerOf(step: CallStep): Envelope {
  if (step.kind !== "answer") throw new Error(`expected an answer, got ${step.kind}`);
  return step.envelope;
}

function envelopeApproval(step: CallStep) {
  return answerOf(step).approval;
}

function errorOf(envelope: Envelope) {
  if (!envelope.error) throw new Error(`expected a failure, got ${envelope.outcome}`);
  return envelope.error;
}

function ofKind<K extends Write["kind"]>(writes: readonly Write[], kind: K): Extract<Write, { kind: K }>[] {
  return writes.filter((write): write is Extract<Write, { kind: K }> => write.kind === kind);
}

function kinds(writes: readonly Write[]): Write["kind"][] {
  return writes.map((write) => write.kind);
}

function countersWritten(writes: readonly Write[]): Counters | null {
  return ofKind(writes, "counters").at(-1)?.counters ?? null;
}

function doneOf(step: DecideStep): Extract<DecideStep, { kind: "done" }> {
  if (step.kind !== "done") throw new Error("expected the decision to be done, not sent");
  return step;
}

const TOOL = (name: string) => catalog.find("support", name);

/** An operator's decision on a run as the ledger would read it. */
function decideOn(
  run: RunMeta,
  approval: ApprovalRecord | null,
  record: CallRecord | null,
  tool: ToolSpec | undefined,
  made: Decision,
  pending: readonly ApprovalRecord[] = [],
): DecideStep {
  return decideApproval({ run, approval, record, tool, pending }, made);
}

/** A sent call's settlement with nothing else pending and no read admission waiting. */
function settleOf(
  key: string | null,
  approval: ApprovalRecord | null,
  envelope: Envelope,
  completion: TraceCompletion,
  callId: string,
  taint: Taint | null = null,
  run: RunMeta = runMeta(),
  pending: readonly ApprovalRecord[] = [],
  record: CallRecord | null = null,
): Write[] {
  return settleSend({
    run,
    call_id: callId,
    key,
    record,
    approval,
    pending,
    admission: null,
    envelope,
    completion,
    taint,
    now: NOW,
  }).writes;
}

/** `n` other pending refunds, each with its own key, open until a minute after T0. */
function waitingApprovals(n: number): ApprovalRecord[] {
  return Array.from({ length: n }, (_, i) =>
    approvalOf(agentCall(OTHER_REFUND), {
      id: `apr_${String(i).padStart(24, "0")}`,
      idempotency_key: `idk_waiting_${i}`,
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// E: the run refuses first
// ---------------------------------------------------------------------------------------------

describe("E: a closed run, a passed deadline or spent calls refuse before anything else", () => {
  const call = agentCall(REFUND);
  const stored = success(context(runMeta(), "call_first", "issue_refund", call.key, ZERO, T0), REFUND_DATA);

  const conditions: [string, RunMeta, string, string | null][] = [
    ["the run is closed", runMeta({ state: "closed", ended_at: T0 + 500 }), "run_closed", null],
    ["the run passed its deadline", runMeta({ deadline_at: NOW }), "budget_exhausted", "deadline"],
    [
      "the run used all its calls",
      runMeta({ counters: { ...ZERO, calls_used: DEFAULT_LIMITS.max_calls } }),
      "budget_exhausted",
      "max_calls",
    ],
  ];
  const keyStates: [string, Partial<CallView>][] = [
    ["no record", {}],
    ["held, approval pending", { record: recordOf(call, "held"), approval: approvalOf(call) }],
    [
      "held, approval rejected",
      { record: recordOf(call, "held"), approval: approvalOf(call, { state: "rejected" }) },
    ],
    [
      "held, approval expired",
      { record: recordOf(call, "held"), approval: approvalOf(call, { state: "expired" }) },
    ],
    ["sending, in flight", { record: recordOf(call, "sending"), inflight: true }],
    ["sending, after a restart", { record: recordOf(call, "sending") }],
    ["in doubt", { record: recordOf(call, "in_doubt") }],
    ["completed", { record: recordOf(call, "completed", stored) }],
  ];

  for (const [condition, run, code, limit] of conditions) {
    // A poll of a pending approval is answered by the approval itself, in an open run (below).
    const states =
      code === "run_closed" ? keyStates : keyStates.filter(([name]) => name !== "held, approval pending");
    it.each(states)(
      `when ${condition}, a call for a key that is %s is refused with ${code}, charging and sending nothing`,
      (_, state) => {
        const step = admitCall(viewOf(run, state), call);
        const error = errorOf(answerOf(step));
        expect(error.code).toBe(code);
        expect(error.details?.limit ?? null).toBe(limit);
        expect(error.side_effect_confirmed).toBe(knownEffect(state.record ?? null).side_effect_confirmed);
        expect(kinds(step.writes)).toEqual(["trace_open", "trace_close"]);
      },
    );
  }

  it("answers a poll of a pending approval when the run's calls are spent: the wait, charged nothing", () => {
    const run = runMeta({ counters: { ...ZERO, calls_used: DEFAULT_LIMITS.max_calls } });
    const patient = { ...call, now: PATIENT };
    const step = admitCall(
      viewOf(run, { record: recordOf(call, "held"), approval: approvalOf(call) }),
      patient,
    );
    expect(errorOf(answerOf(step)).code).toBe("approval_required");
    expect(kinds(step.writes)).toEqual(["trace_open", "trace_close"]);
  });

  it("refuses an eager poll when the run's calls are spent, naming the free ways to wait; the approval stays", () => {
    const run = runMeta({ counters: { ...ZERO, calls_used: DEFAULT_LIMITS.max_calls } });
    const approval = approvalOf(call);
    const step = admitCall(viewOf(run, { record: recordOf(call, "held"), approval }), call);
    const envelope = answerOf(step);
    expect(errorOf(envelope)).toMatchObject({
      code: "budget_exhausted",
      details: { limit: "max_calls" },
      side_effect_confirmed: false,
      retry_after_ms: APPROVAL_POLL_MS,
    });
    expect(errorOf(envelope).message).toMatch(/sooner than its retry_after_ms.*Prefer: wait/);
    expect(envelope.approval).toMatchObject({ id: approval.id, state: "pending" });
    expect(kinds(step.writes)).toEqual(["trace_open", "trace_close"]);
    expect(step.writes[0]).toMatchObject({ entry: { poll: true, poll_charged: true } });
  });

  it("answers a poll past the run's deadline with the approval's expiry, saying why", () => {
    const step = admitCall(
      viewOf(runMeta({ deadline_at: NOW }), { record: recordOf(call, "held"), approval: approvalOf(call) }),
      { ...call, now: PATIENT },
    );
    expect(errorOf(answerOf(step))).toMatchObject({
      code: "approval_expired",
      details: { reason: "the run passed its deadline" },
    });
    expect(kinds(step.writes)).toEqual(["trace_open", "approval_state", "trace_close"]);
  });

  it("refuses a call with invalid arguments for the spent budget, not for its arguments", () => {
    const run = runMeta({ counters: { ...ZERO, calls_used: DEFAULT_LIMITS.max_calls } });
    const step = admitCall(viewOf(run), agentCall(INVALID));
    expect(errorOf(answerOf(step)).code).toBe("budget_exhausted");
  });

  it("refuses an unknown tool in a closed run as run_closed, not not_found", () => {
    const step = admitCall(viewOf(runMeta({ state: "closed" })), agentCall(["refund_everything", {}]));
    expect(errorOf(answerOf(step)).code).toBe("run_closed");
  });

  it("refuses a call that would be a repeat for the passed deadline, not as a repeat", () => {
    const run = runMeta({ deadline_at: NOW - 1 });
    const step = admitCall(viewOf(run, { earlier_identical: 5 }), agentCall(READ));
    expect(errorOf(answerOf(step)).details).toEqual({ limit: "deadline" });
  });

  it("never expires a pending approval while refusing for the run (the sweep does that)", () => {
    const run = runMeta({ state: "closed" });
    const step = admitCall(viewOf(run, { record: recordOf(call, "held"), approval: approvalOf(call) }), call);
    expect(ofKind(step.writes, "approval_state")).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// knownEffect: refusals tell the truth about a key's effect
// ---------------------------------------------------------------------------------------------

describe("a refusal tells what is known of the key's effect", () => {
  const call = agentCall(REFUND);
  const storedSuccess = success(
    context(runMeta(), "call_first", "issue_refund", call.key, ZERO, T0),
    REFUND_DATA,
  );
  const storedFailure = failure(context(runMeta(), "call_first", "issue_refund", call.key, ZERO, T0), {
    code: "conflict_error",
    message: "refused upstream",
    side_effect_confirmed: false,
  });

  it("a completed key with a stored success: side_effect_confirmed true, its external id and the stored outcome", () => {
    expect(knownEffect(recordOf(call, "completed", storedSuccess))).toEqual({
      side_effect_confirmed: true,
      external_id: "rf_0001",
      observed: {
        stored_outcome: { call_id: "call_first", outcome: "success", data: REFUND_DATA, error_code: null },
      },
    });
  });

  it("a completed key with a stored failure: what that failure confirmed, and its code", () => {
    const known = knownEffect(recordOf(call, "completed", storedFailure));
    expect(known.side_effect_confirmed).toBe(false);
    expect(known.observed).toEqual({
      stored_outcome: {
        call_id: "call_first",
        outcome: "terminal_failure",
        data: null,
        error_code: "conflict_error",
      },
    });
  });

  it.each(["sending", "in_doubt"] as const)("a %s key: unknown (null), nothing observed", (state) => {
    expect(knownEffect(recordOf(call, state))).toEqual({ side_effect_confirmed: null, observed: null });
  });

  it("a held key or no record: nothing happened (false)", () => {
    expect(knownEffect(recordOf(call, "held"))).toEqual({ side_effect_confirmed: false, observed: null });
    expect(knownEffect(null)).toEqual({ side_effect_confirmed: false, observed: null });
  });

  it("a refused call for a completed key carries side_effect_confirmed true, external_id and observed_state.stored_outcome", () => {
    const run = runMeta({ state: "closed" });
    const envelope = answerOf(
      admitCall(viewOf(run, { record: recordOf(call, "completed", storedSuccess) }), call),
    );
    expect(envelope.error).toMatchObject({
      code: "run_closed",
      side_effect_confirmed: true,
      external_id: "rf_0001",
    });
    expect(envelope.observed_state).toEqual({
      stored_outcome: { call_id: "call_first", outcome: "success", data: REFUND_DATA, error_code: null },
    });
  });

  it("a refused call for an in-doubt key carries side_effect_confirmed null", () => {
    const run = runMeta({ deadline_at: NOW });
    const envelope = answerOf(admitCall(viewOf(run, { record: recordOf(call, "in_doubt") }), call));
    expect(envelope.error).toMatchObject({
      code: "budget_exhausted",
      side_effect_confirmed: null,
      external_id: null,
    });
    expect(envelope.observed_state).toBeNull();
  });

  it("a refused call for a key with no record carries side_effect_confirmed false", () => {
    const run = runMeta({ state: "closed" });
    const envelope = answerOf(admitCall(viewOf(run), call));
    expect(envelope.error).toMatchObject({ code: "run_closed", side_effect_confirmed: false });
  });

  it("a repeat of a completed key says its effect was confirmed", () => {
    const step = admitCall(
      viewOf(runMeta(), { record: recordOf(call, "completed", storedSuccess), earlier_identical: 2 }),
      call,
    );
    expect(errorOf(answerOf(step))).toMatchObject({ code: "repeat_detected", side_effect_confirmed: true });
  });
});

// ---------------------------------------------------------------------------------------------
// Key (none)
// ---------------------------------------------------------------------------------------------

describe("key (none) × agent call", () => {
  it("a read is charged one call and sent without a key, spending no effect budget", () => {
    const call = agentCall(READ);
    const step = admitCall(viewOf(runMeta()), call);
    expect(step).toMatchObject({ kind: "send", key: null, request: call.request });
    expect(countersWritten(step.writes)).toEqual({ ...ZERO, calls_used: 1 });
    expect(ofKind(step.writes, "key_send")).toEqual([]);
  });

  it("a write no human must approve spends one call and one write, moves the key to sending and sends the call's request", () => {
    const call = agentCall(TICKET);
    const step = admitCall(viewOf(runMeta()), call);
    if (step.kind !== "send") throw new Error("expected a send");
    expect(step.key).toBe(call.key);
    expect(step.request).toBe(call.request);
    expect(step.budget).toEqual({ calls_used: 1, writes_used: 1, destructive_used: 0 });
    expect(kinds(step.writes)).toEqual(["trace_open", "counters", "key_send"]);
    expect(ofKind(step.writes, "key_send")[0]).toEqual({
      kind: "key_send",
      key: call.key,
      tool: "create_internal_ticket",
      side_effect: "write",
      request: call.request,
      now: NOW,
    });
  });

  it("a destructive call the tenant auto-approves spends one destructive action and is sent", () => {
    const call = agentCall(SMALL_REFUND);
    expect(call.prepared.approval.required).toBe(false);
    const step = admitCall(viewOf(runMeta()), call);
    expect(step.kind).toBe("send");
    expect(countersWritten(step.writes)).toEqual({ calls_used: 1, writes_used: 0, destructive_used: 1 });
  });

  it.each([
    ["a destructive call that needs a human", REFUND, { destructive_used: 1 }, "max_destructive"],
    ["an auto-approved destructive call", SMALL_REFUND, { destructive_used: 1 }, "max_destructive"],
    ["a write that needs a human", URGENT_TICKET, { writes_used: 5 }, "max_writes"],
    ["a write", TICKET, { writes_used: 5 }, "max_writes"],
  ] as const)(
    "%s with its effect budget spent is budget_exhausted, charged one call, and opens no approval",
    (_, template, spent, limit) => {
      const run = runMeta({ counters: { ...ZERO, ...spent } });
      const step = admitCall(viewOf(run), agentCall(template));
      const error = errorOf(answerOf(step));
      expect(error).toMatchObject({ code: "budget_exhausted", side_effect_confirmed: false });
      expect(error.details).toEqual({ limit });
      expect(envelopeApproval(step)).toBeNull();
      expect(kinds(step.writes)).toEqual(["trace_open", "counters", "trace_close"]);
      expect(countersWritten(step.writes)).toEqual({ ...run.counters, calls_used: 1 });
    },
  );

  it("a call that needs a human holds the key with the call's request, opens a pending approval and answers approval_required", () => {
    const call = agentCall(REFUND);
    const run = runMeta();
    const step = admitCall(viewOf(run), call);
    const envelope = answerOf(step);
    expect(kinds(step.writes)).toEqual([
      "trace_open",
      "approval_open",
      "key_hold",
      "counters",
      "trace_close",
    ]);

    const [opened] = ofKind(step.writes, "approval_open");
    expect(opened?.approval).toMatchObject({
      tenant: "acme",
      run_id: "run_machine",
      tool: "issue_refund",
      side_effect: "destructive",
      idempotency_key: call.key,
      args: { amount_cents: 1999, order_id: "A1001", reason: "out_of_stock" },
      args_digest: call.digest,
      policy_version: POLICY,
      reasons: ["destructive tools need a human approval"],
      state: "pending",
      requested_call_id: call.call_id,
      created_at: new Date(NOW).toISOString(),
      decided_at: null,
      result: null,
    });

    const [hold] = ofKind(step.writes, "key_hold");
    expect(hold?.record).toEqual({
      key: call.key,
      tool: "issue_refund",
      side_effect: "destructive",
      state: "held",
      request: call.request,
      envelope: null,
      sends: 0,
    });
    expect(hold?.record.request).toBe(call.request);

    const error = errorOf(envelope);
    expect(envelope.outcome).toBe("retryable_failure");
    expect(error).toMatchObject({
      code: "approval_required",
      retry_after_ms: APPROVAL_POLL_MS,
      recommended_next_action: "wait_for_approval",
      side_effect_confirmed: false,
      details: { approval_id: opened?.approval.id },
    });
    expect(envelope.approval).toEqual({
      id: opened?.approval.id,
      state: "pending",
      expires_at: opened?.approval.expires_at,
    });
  });

  it("holding a key for a human spends a call but no effect budget", () => {
    const step = admitCall(viewOf(runMeta()), agentCall(URGENT_TICKET));
    expect(countersWritten(step.writes)).toEqual({ ...ZERO, calls_used: 1 });
  });

  it("max_open_approvals: with that many approvals waiting, a call that needs a human is budget_exhausted and opens nothing", () => {
    const step = admitCall(
      viewOf(runMeta(), { pending: waitingApprovals(3), max_open_approvals: 3 }),
      agentCall(REFUND),
    );
    expect(errorOf(answerOf(step))).toMatchObject({
      code: "budget_exhausted",
      details: { limit: "max_open_approvals" },
    });
    expect(ofKind(step.writes, "approval_open")).toEqual([]);
    expect(ofKind(step.writes, "key_hold")).toEqual([]);
  });

  it("max_open_approvals: one below the maximum, the approval is opened", () => {
    const step = admitCall(
      viewOf(runMeta(), { pending: waitingApprovals(2), max_open_approvals: 3 }),
      agentCall(REFUND),
    );
    expect(ofKind(step.writes, "approval_open")).toHaveLength(1);
  });

  it("max_open_approvals counts only the approvals still within their window", () => {
    const lapsed = waitingApprovals(3).map((approval) => ({
      ...approval,
      expires_at: new Date(NOW).toISOString(),
    }));
    const step = admitCall(viewOf(runMeta(), { pending: lapsed, max_open_approvals: 3 }), agentCall(REFUND));
    expect(ofKind(step.writes, "approval_open")).toHaveLength(1);
  });

  it("max_open_approvals does not stop a call that needs no human", () => {
    const step = admitCall(
      viewOf(runMeta(), { pending: waitingApprovals(3), max_open_approvals: 3 }),
      agentCall(TICKET),
    );
    expect(step.kind).toBe("send");
  });

  it("an approval's expires_at never passes the run's deadline", () => {
    const run = runMeta();
    const opened = ofKind(admitCall(viewOf(run), agentCall(REFUND)).writes, "approval_open")[0]?.approval;
    expect(opened?.expires_at).toBe(new Date(run.deadline_at).toISOString());
  });

  it("an approval's expires_at is the approval window when the run outlives it", () => {
    const run = runMeta({ deadline_at: NOW + APPROVAL_TTL_MS + 60_000 });
    const opened = ofKind(admitCall(viewOf(run), agentCall(REFUND)).writes, "approval_open")[0]?.approval;
    expect(opened?.expires_at).toBe(new Date(NOW + APPROVAL_TTL_MS).toISOString());
  });

  it("the nth identical call (n = repeat_threshold) is repeat_detected, charged, and sends nothing", () => {
    const call = agentCall(TICKET);
    const step = admitCall(viewOf(runMeta(), { earlier_identical: 2 }), call);
    expect(errorOf(answerOf(step))).toMatchObject({
      code: "repeat_detected",
      details: { earlier_identical_calls: 2, threshold: 3 },
    });
    expect(ofKind(step.writes, "key_send")).toEqual([]);
    expect(countersWritten(step.writes)).toEqual({ ...ZERO, calls_used: 1 });
    expect(admitCall(viewOf(runMeta(), { earlier_identical: 1 }), call).kind).toBe("send");
  });

  it("a call with invalid arguments is charged one call and refused with validation_error, with no key", () => {
    const call = agentCall(INVALID);
    expect(call.key).toBeNull();
    const step = admitCall(viewOf(runMeta()), call);
    expect(errorOf(answerOf(step)).code).toBe("validation_error");
    expect(kinds(step.writes)).toEqual(["trace_open", "counters", "trace_close"]);
  });

  it("a call for a tool that does not exist is not_found", () => {
    const step = admitCall(viewOf(runMeta()), agentCall(["refund_everything", { all: true }]));
    expect(errorOf(answerOf(step)).code).toBe("not_found");
  });

  it("opens every trace entry with the call's digest, key, masked arguments and the run's catalog version", () => {
    const call = agentCall(TICKET);
    const [open] = ofKind(admitCall(viewOf(runMeta()), call).writes, "trace_open");
    expect(open?.entry).toEqual({
      call_id: call.call_id,
      actor: "agent",
      started_at: NOW,
      tool: "create_internal_ticket",
      side_effect: "write",
      args: call.trace_args,
      call_digest: call.digest,
      idempotency_key: call.key,
      catalog_version: "cat_test",
      claim_ms: null,
    });
  });
});

describe("key (none) × operator and upstream events", () => {
  it.each(["approve", "reject"] as const)(
    "to %s an approval that does not exist is not_found and writes nothing",
    (kind) => {
      expect(decideOn(runMeta(), null, null, TOOL("issue_refund"), decision(kind))).toEqual({
        kind: "done",
        writes: [],
        refusal: { code: "not_found", message: "No such approval." },
      });
    },
  );

  it("settling a read (no key) only closes its trace entry", () => {
    const run = runMeta();
    const envelope = upstreamEnvelope(run, "call_r", null, "success");
    const completion = completionOf(envelope, NOW);
    expect(settleOf(null, null, envelope, completion, "call_r")).toEqual([
      { kind: "trace_close", call_id: "call_r", completion },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Key held / approval pending
// ---------------------------------------------------------------------------------------------

describe("an approval past its SLA, when the alarm rings", () => {
  const call = agentCall(REFUND);
  const due = new Date(NOW - 1).toISOString();

  it("is escalated once, naming the tenant's escalation role, and stays pending", () => {
    const overdue = approvalOf(call, { sla_due_at: due });
    const writes = alarmRings(runMeta(), [overdue], NOW, POLICY, "support_lead");
    expect(writes).toEqual([
      { kind: "approval_escalate", id: overdue.id, at: NOW, escalation_role: "support_lead" },
    ]);
    const announced = approvalOf(call, { sla_due_at: due, escalated_at: due });
    expect(alarmRings(runMeta(), [announced], NOW, POLICY, "support_lead")).toEqual([]);
  });

  it("is not escalated before its SLA, nor without one", () => {
    const early = approvalOf(call, { sla_due_at: new Date(NOW + 1).toISOString() });
    expect(alarmRings(runMeta(), [early, approvalOf(call)], NOW, POLICY, null)).toEqual([]);
  });

  it("that expires in the same ring only expires: it is not announced overdue too", () => {
    const lapsed = approvalOf(call, { sla_due_at: due, expires_at: new Date(NOW).toISOString() });
    expect(kinds(alarmRings(runMeta(), [lapsed], NOW, POLICY, "support_lead"))).toEqual(["approval_state"]);
  });
});

describe("key held, approval pending", () => {
  const call = agentCall(REFUND);
  const record = recordOf(call, "held");
  const pending = approvalOf(call);

  it("expires the approval when the policy changed so that the call would no longer need a human", () => {
    // Asked under an older policy that wanted a human for a small refund; the current one waives it.
    const small = agentCall(SMALL_REFUND);
    const held = recordOf(small, "held");
    const asked = approvalOf(small, { policy_version: OLD_POLICY });
    const envelope = answerOf(admitCall(viewOf(runMeta(), { record: held, approval: asked }), small));
    expect(errorOf(envelope)).toMatchObject({
      code: "approval_expired",
      details: { reason: "the policy changed since it was requested" },
    });
  });

  it("the agent's identical call is told to wait (approval_required), charged nothing, and marked a poll", () => {
    const step = admitCall(viewOf(runMeta(), { record, approval: pending }), { ...call, now: PATIENT });
    const envelope = answerOf(step);
    expect(errorOf(envelope)).toMatchObject({
      code: "approval_required",
      details: { approval_id: pending.id },
      retry_after_ms: APPROVAL_POLL_MS,
    });
    expect(envelope.approval).toEqual({ id: pending.id, state: "pending", expires_at: pending.expires_at });
    expect(kinds(step.writes)).toEqual(["trace_open", "trace_close"]);
    expect(step.writes[0]).toMatchObject({ kind: "trace_open", entry: { poll: true } });
  });

  it("charges a poll sooner than the hint as a call, and marks it so; it is still answered with the wait", () => {
    const step = admitCall(viewOf(runMeta(), { record, approval: pending }), call);
    const envelope = answerOf(step);
    expect(errorOf(envelope).code).toBe("approval_required");
    expect(envelope.budget?.calls_left).toBe(DEFAULT_LIMITS.max_calls - 1);
    expect(ofKind(step.writes, "counters")).toEqual([
      { kind: "counters", counters: { ...ZERO, calls_used: 1 } },
    ]);
    expect(step.writes[0]).toMatchObject({ kind: "trace_open", entry: { poll: true, poll_charged: true } });
  });

  it("keeps a poll free while it waits for the decision (Prefer: wait), however soon it comes", () => {
    const step = admitCall(viewOf(runMeta(), { record, approval: pending }), { ...call, waits: true });
    expect(kinds(step.writes)).toEqual(["trace_open", "trace_close"]);
    expect(step.writes[0]).toMatchObject({ kind: "trace_open", entry: { poll: true } });
    expect(step.writes[0]).not.toMatchObject({ entry: { poll_charged: true } });
  });

  it("prices the k-th poll by the pace since the approval was asked, and charges every poll past the free ones", () => {
    // The approval and the run open for a day: every poll below finds it pending.
    const approval = approvalOf(call, { expires_at: new Date(T0 + APPROVAL_TTL_MS).toISOString() });
    const at = (polls_before: number, now: number) => {
      const run = runMeta({ deadline_at: T0 + APPROVAL_TTL_MS });
      const step = admitCall(viewOf(run, { record, approval, polls_before }), { ...call, now });
      expect(errorOf(answerOf(step)).code).toBe("approval_required");
      return kinds(step.writes).includes("counters");
    };
    expect(at(2, T0 + 3 * APPROVAL_POLL_MS)).toBe(false);
    expect(at(2, T0 + 3 * APPROVAL_POLL_MS - 1)).toBe(true);
    expect(at(FREE_POLLS_PER_APPROVAL - 1, T0 + FREE_POLLS_PER_APPROVAL * APPROVAL_POLL_MS)).toBe(false);
    expect(at(FREE_POLLS_PER_APPROVAL, T0 + (FREE_POLLS_PER_APPROVAL + 1) * APPROVAL_POLL_MS)).toBe(true);
  });

  it.each([
    [
      "its approval window passed",
      runMeta(),
      approvalOf(call, { expires_at: new Date(NOW).toISOString() }),
      POLICY,
      "nobody decided within the approval window",
    ],
    ["the policy changed", runMeta(), pending, "pol_next", "the policy changed since it was requested"],
    [
      "the destructive budget is spent",
      runMeta({ counters: { ...ZERO, destructive_used: 1 } }),
      pending,
      POLICY,
      "the run's max_destructive budget is spent",
    ],
  ] as const)(
    "when %s, the agent's identical call expires the approval and is told why (approval_expired)",
    (_, run, approval, policy, why) => {
      const asked = agentCall(REFUND, { policy_version: policy });
      const step = admitCall(viewOf(run, { record, approval }), asked);
      const envelope = answerOf(step);
      expect(envelope.outcome).toBe("terminal_failure");
      expect(errorOf(envelope)).toMatchObject({
        code: "approval_expired",
        side_effect_confirmed: false,
        recommended_next_action: "escalate_to_human",
        details: { approval_id: approval.id, reason: why },
      });
      expect(errorOf(envelope).message).toContain(why);
      expect(envelope.approval).toEqual({
        id: approval.id,
        state: "expired",
        expires_at: approval.expires_at,
      });
      expect(ofKind(step.writes, "approval_state")).toEqual([
        {
          kind: "approval_state",
          id: approval.id,
          state: "expired",
          decision: { at: NOW, by: null, by_name: null, reason: why },
        },
      ]);
      expect(ofKind(step.writes, "key_send")).toEqual([]);
    },
  );

  it("the operator's approval spends the effect budget and sends the record's stored request, the same object", () => {
    const run = runMeta({ counters: { calls_used: 4, writes_used: 1, destructive_used: 0 } });
    const step = decideOn(run, pending, record, TOOL("issue_refund"), decision("approve"));
    if (step.kind !== "send") throw new Error("expected a send");
    expect(step.key).toBe(record.key);
    expect(step.request).toBe(record.request);
    expect(step.request).not.toBe(call.request);
    expect(step.tool.name).toBe("issue_refund");
    expect(step.args).toBe(pending.args);
    expect(kinds(step.writes)).toEqual(["approval_state", "trace_open", "counters", "key_send"]);
    expect(ofKind(step.writes, "approval_state")[0]).toEqual({
      kind: "approval_state",
      id: pending.id,
      state: "approved",
      decision: { at: NOW, by: "operator:ops1", by_name: "Dana Reyes", reason: null },
    });
    expect(countersWritten(step.writes)).toEqual({ calls_used: 4, writes_used: 1, destructive_used: 1 });
    const [send] = ofKind(step.writes, "key_send");
    expect(send).toMatchObject({
      key: record.key,
      tool: "issue_refund",
      side_effect: "destructive",
      now: NOW,
    });
    expect(send?.request).toBe(record.request);
    expect(ofKind(step.writes, "trace_open")[0]?.entry).toMatchObject({
      call_id: "call_operator",
      actor: "operator:ops1",
      args: pending.args,
      call_digest: pending.args_digest,
      idempotency_key: record.key,
    });
  });

  it("approving a write spends a write, not a destructive action", () => {
    const ticket = agentCall(URGENT_TICKET);
    const step = decideOn(
      runMeta(),
      approvalOf(ticket),
      recordOf(ticket, "held"),
      TOOL("create_internal_ticket"),
      decision("approve"),
    );
    expect(countersWritten(step.writes)).toEqual({ ...ZERO, writes_used: 1 });
  });

  it("the operator's rejection rejects it, sends nothing and spends nothing", () => {
    const step = decideOn(runMeta(), pending, record, TOOL("issue_refund"), decision("reject"));
    expect(step).toEqual({
      kind: "done",
      refusal: null,
      writes: [
        {
          kind: "approval_state",
          id: pending.id,
          state: "rejected",
          decision: {
            at: NOW,
            by: "operator:ops1",
            by_name: "Dana Reyes",
            reason: "not covered by the policy",
          },
        },
      ],
    });
  });

  const cannot: [string, RunMeta, ApprovalRecord, string, string][] = [
    [
      "the run was ended",
      runMeta({ state: "closed", ended_at: NOW - 1 }),
      pending,
      POLICY,
      "the run was ended",
    ],
    [
      "the run passed its deadline",
      runMeta({ deadline_at: NOW }),
      pending,
      POLICY,
      "the run passed its deadline",
    ],
    [
      "the approval window passed",
      runMeta(),
      approvalOf(call, { expires_at: new Date(NOW - 1).toISOString() }),
      POLICY,
      "nobody decided within the approval window",
    ],
    [
      "the policy changed",
      runMeta(),
      approvalOf(call, { policy_version: OLD_POLICY }),
      POLICY,
      "the policy changed since it was requested",
    ],
    [
      "the destructive budget is spent",
      runMeta({ counters: { ...ZERO, destructive_used: 1 } }),
      pending,
      POLICY,
      "the run's max_destructive budget is spent",
    ],
  ];
  for (const kind of ["approve", "reject"] as const) {
    it.each(cannot)(
      `to ${kind} one that can no longer execute (%s) is a conflict that expires it with its reason and never sends`,
      (_, run, approval, policy, why) => {
        const step = doneOf(
          decideOn(run, approval, record, TOOL("issue_refund"), decision(kind, { policy_version: policy })),
        );
        expect(step.refusal?.code).toBe("conflict_error");
        expect(step.refusal?.message).toContain(why);
        expect(step.writes).toEqual([
          {
            kind: "approval_state",
            id: approval.id,
            state: "expired",
            decision: { at: NOW, by: null, by_name: null, reason: why },
          },
        ]);
      },
    );
  }

  it("approving when the tool left the catalog is a conflict that sends nothing", () => {
    const step = doneOf(decideOn(runMeta(), pending, record, undefined, decision("approve")));
    expect(step.refusal?.code).toBe("conflict_error");
    expect(step.writes).toEqual([]);
  });

  it("no upstream outcome can arrive for it: nothing was sent (the sweep is its only other event)", () => {
    expect(sweepApprovals(runMeta(), [pending], NOW, POLICY)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Key held / approval rejected or expired
// ---------------------------------------------------------------------------------------------

describe("key held, approval rejected", () => {
  const call = agentCall(REFUND);
  const record = recordOf(call, "held");
  const rejected = approvalOf(call, {
    state: "rejected",
    decided_by: "operator:ops1",
    decision_reason: "not covered by the policy",
  });

  it("the agent's identical call is approval_rejected (terminal), naming the operator's reason, and sends nothing", () => {
    const step = admitCall(viewOf(runMeta(), { record, approval: rejected }), call);
    const envelope = answerOf(step);
    expect(envelope.outcome).toBe("terminal_failure");
    expect(errorOf(envelope)).toMatchObject({
      code: "approval_rejected",
      side_effect_confirmed: false,
      details: { approval_id: rejected.id, reason: "not covered by the policy" },
    });
    expect(errorOf(envelope).message).toContain("not covered by the policy");
    expect(envelope.approval?.state).toBe("rejected");
    expect(kinds(step.writes)).toEqual(["trace_open", "counters", "trace_close"]);
  });

  it("approving it is a conflict and changes nothing", () => {
    const step = doneOf(decideOn(runMeta(), rejected, record, TOOL("issue_refund"), decision("approve")));
    expect(step.writes).toEqual([]);
    expect(step.refusal).toEqual({ code: "conflict_error", message: "This approval is already rejected." });
  });

  it("rejecting it again is a no-op", () => {
    expect(decideOn(runMeta(), rejected, record, TOOL("issue_refund"), decision("reject"))).toEqual({
      kind: "done",
      writes: [],
      refusal: null,
    });
  });

  it("the sweep leaves it alone", () => {
    expect(sweepApprovals(runMeta({ state: "closed" }), [rejected], NOW, POLICY)).toEqual([]);
  });
});

describe("key held, approval expired", () => {
  const call = agentCall(REFUND);
  const record = recordOf(call, "held");
  const expired = approvalOf(call, {
    state: "expired",
    decision_reason: "the policy changed since it was requested",
  });

  it("the agent's identical call is approval_expired (terminal), naming why, and sends nothing", () => {
    const step = admitCall(viewOf(runMeta(), { record, approval: expired }), call);
    const envelope = answerOf(step);
    expect(envelope.outcome).toBe("terminal_failure");
    expect(errorOf(envelope)).toMatchObject({
      code: "approval_expired",
      side_effect_confirmed: false,
      details: { approval_id: expired.id, reason: "the policy changed since it was requested" },
    });
    expect(ofKind(step.writes, "approval_state")).toEqual([]);
    expect(ofKind(step.writes, "key_send")).toEqual([]);
  });

  it("an expiry without a recorded reason says nobody decided in time: it expired undecided", () => {
    const bare = approvalOf(call, { state: "expired" });
    const envelope = answerOf(admitCall(viewOf(runMeta(), { record, approval: bare }), call));
    expect(errorOf(envelope).details).toEqual({
      approval_id: bare.id,
      reason: "nobody decided in time",
      ended: "expired_undecided",
    });
    expect(errorOf(envelope).message).toMatch(
      /^This call's approval expired undecided .* Do not retry; tell the user/,
    );
  });

  it("an approval that could no longer execute ended invalidated, not undecided", () => {
    const envelope = answerOf(admitCall(viewOf(runMeta(), { record, approval: expired }), call));
    expect(errorOf(envelope).details).toMatchObject({ ended: "expired_invalidated" });
    expect(errorOf(envelope).message).not.toContain("undecided");
  });

  it.each(["approve", "reject"] as const)(
    "to %s it is a conflict naming why it expired, and changes nothing",
    (kind) => {
      const step = doneOf(decideOn(runMeta(), expired, record, TOOL("issue_refund"), decision(kind)));
      expect(step.writes).toEqual([]);
      expect(step.refusal).toEqual({
        code: "conflict_error",
        message: "This approval is already expired (the policy changed since it was requested).",
      });
    },
  );

  it("the sweep leaves it alone", () => {
    expect(sweepApprovals(runMeta({ state: "closed" }), [expired], NOW, null)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Key sending / in doubt
// ---------------------------------------------------------------------------------------------

for (const state of ["sending", "in_doubt"] as const) {
  describe(`key ${state}`, () => {
    const call = agentCall(REFUND);
    const record = recordOf(call, state);
    const approved = approvalOf(call, { state: "approved", decided_by: "operator:ops1" });

    it("an identical call while its request is in flight joins it, charged one call, sending nothing", () => {
      const step = admitCall(viewOf(runMeta(), { record, approval: approved, inflight: true }), call);
      expect(step).toEqual({
        kind: "join",
        key: record.key,
        writes: [
          expect.objectContaining({ kind: "trace_open" }),
          { kind: "counters", counters: { ...ZERO, calls_used: 1 } },
        ],
      });
    });

    it("an identical call with nothing in flight resends the stored request (not the call's), spending no effect budget", () => {
      const run = runMeta({ counters: { calls_used: 3, writes_used: 0, destructive_used: 1 } });
      const step = admitCall(viewOf(run, { record, approval: approved }), call);
      if (step.kind !== "send") throw new Error("expected a send");
      expect(step.key).toBe(record.key);
      expect(step.request).toBe(record.request);
      expect(step.request).not.toEqual(call.request);
      expect(step.budget).toEqual({ calls_used: 4, writes_used: 0, destructive_used: 1 });
      expect(kinds(step.writes)).toEqual(["trace_open", "counters", "key_send"]);
      expect(ofKind(step.writes, "key_send")[0]?.request).toBe(record.request);
    });

    it("a resend passes no approval gate: it is recovery, even with the destructive budget spent", () => {
      const run = runMeta({ counters: { ...ZERO, destructive_used: 5 } });
      expect(admitCall(viewOf(run, { record, approval: null }), call).kind).toBe("send");
    });

    it("the operator approving again changes nothing; rejecting is a conflict", () => {
      expect(decideOn(runMeta(), approved, record, TOOL("issue_refund"), decision("approve"))).toEqual({
        kind: "done",
        writes: [],
        refusal: null,
      });
      const rejected = doneOf(
        decideOn(runMeta(), approved, record, TOOL("issue_refund"), decision("reject")),
      );
      expect(rejected.writes).toEqual([]);
      expect(rejected.refusal?.code).toBe("conflict_error");
    });

    it("a retryable upstream outcome leaves the key in doubt, keeping its answer, and the approval approved", () => {
      const envelope = upstreamEnvelope(runMeta(), "call_x", record.key, "retryable");
      const completion = completionOf(envelope, NOW + 5);
      // The agent's answer says so too: its approval block is still approved, its call in doubt.
      const told = {
        ...envelope,
        approval: { ...approvalBlock(approved), state: "approved" as const, execution: "in_doubt" as const },
      };
      expect(settleOf(record.key, approved, envelope, completion, "call_x")).toEqual([
        { kind: "key_settle", key: record.key, state: "in_doubt", envelope: told, now: NOW + 5 },
        // Still approved, and now known to be in doubt: the operator is not told it executed.
        { kind: "approval_in_doubt", id: approved.id },
        { kind: "trace_close", call_id: "call_x", completion },
      ]);
    });

    it.each(["success", "terminal"] as const)(
      "a %s upstream outcome completes the key with its envelope and executes the approval",
      (outcome) => {
        const envelope = upstreamEnvelope(runMeta(), "call_x", record.key, outcome);
        const completion = completionOf(envelope, NOW + 5);
        // The terminal answer is the upstream's refusal, known not to have acted.
        const execution = outcome === "success" ? "executed" : "refused";
        // The agent's answer says what its approved call did, as the approval records it.
        const told = {
          ...envelope,
          approval: { ...approvalBlock(approved), state: "executed" as const, execution },
        };
        expect(settleOf(record.key, approved, envelope, completion, "call_x")).toEqual([
          { kind: "key_settle", key: record.key, state: "completed", envelope: told, now: NOW + 5 },
          {
            kind: "approval_state",
            id: approved.id,
            state: "executed",
            decision: null,
            result: told,
            execution,
          },
          { kind: "trace_close", call_id: "call_x", completion },
        ]);
      },
    );

    it("the sweep leaves its approved approval alone", () => {
      expect(sweepApprovals(runMeta({ state: "closed" }), [approved], NOW, null)).toEqual([]);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Key completed
// ---------------------------------------------------------------------------------------------

describe("key completed", () => {
  const call = agentCall(REFUND);
  const run = runMeta({ counters: { calls_used: 2, writes_used: 0, destructive_used: 1 } });
  const stored = success(
    context(run, "call_first", "issue_refund", call.key, run.counters, T0 + 10),
    REFUND_DATA,
  );
  const record = recordOf(call, "completed", stored);
  const executed = approvalOf(call, { state: "executed", result: stored });

  it("an identical call replays the stored envelope under its own call id, with the budget as it is now", () => {
    const step = admitCall(viewOf(run, { record, approval: executed, inflight: true }), call);
    const envelope = answerOf(step);
    expect(envelope).toEqual({
      ...stored,
      call_id: call.call_id,
      replayed: true,
      budget: {
        calls_left: DEFAULT_LIMITS.max_calls - 3,
        writes_left: DEFAULT_LIMITS.max_writes,
        destructive_left: 0,
        deadline_ms_left: run.deadline_at - NOW,
      },
    });
    expect(kinds(step.writes)).toEqual(["trace_open", "counters", "trace_close"]);
    expect(ofKind(step.writes, "trace_close")[0]?.completion).toMatchObject({
      replayed: true,
      outcome: "success",
    });
  });

  it("a stored failure is replayed as it was, never resent", () => {
    const refused = upstreamEnvelope(run, "call_first", record.key, "terminal");
    const step = admitCall(viewOf(run, { record: recordOf(call, "completed", refused) }), call);
    expect(answerOf(step)).toMatchObject({
      outcome: "terminal_failure",
      replayed: true,
      error: refused.error,
    });
    expect(ofKind(step.writes, "key_send")).toEqual([]);
  });

  it("the operator approving again changes nothing; rejecting is a conflict", () => {
    expect(decideOn(run, executed, record, TOOL("issue_refund"), decision("approve"))).toEqual({
      kind: "done",
      writes: [],
      refusal: null,
    });
    const rejected = doneOf(decideOn(run, executed, record, TOOL("issue_refund"), decision("reject")));
    expect(rejected.refusal).toEqual({
      code: "conflict_error",
      message: "This approval is already executed.",
    });
    expect(rejected.writes).toEqual([]);
  });

  it("the sweep leaves its executed approval alone", () => {
    expect(sweepApprovals(runMeta({ state: "closed" }), [executed], NOW, null)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// settleSend details
// ---------------------------------------------------------------------------------------------

describe("settling a sent call", () => {
  const call = agentCall(REFUND);
  const key = keyOf(call);
  const run = runMeta();

  it("records the taint first, when the call brought third-party text in", () => {
    const envelope = upstreamEnvelope(run, "call_t", key, "success");
    const taint = { call_id: "call_t", tool: "lookup_order", at: new Date(NOW).toISOString() };
    const writes = settleOf(key, null, envelope, completionOf(envelope, NOW), "call_t", taint);
    expect(kinds(writes)).toEqual(["taint", "key_settle", "trace_close"]);
    expect(writes[0]).toEqual({ kind: "taint", taint });
  });

  it.each(["pending", "rejected", "expired"] as const)("never touches an approval that is %s", (state) => {
    const envelope = upstreamEnvelope(run, "call_t", key, "success");
    const writes = settleOf(
      key,
      approvalOf(call, { state }),
      envelope,
      completionOf(envelope, NOW),
      "call_t",
    );
    expect(ofKind(writes, "approval_state")).toEqual([]);
  });

  it("a key without approval completes without any approval write", () => {
    const envelope = upstreamEnvelope(run, "call_t", key, "terminal");
    expect(kinds(settleOf(key, null, envelope, completionOf(envelope, NOW), "call_t"))).toEqual([
      "key_settle",
      "trace_close",
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// joinedAnswer
// ---------------------------------------------------------------------------------------------

describe("a joined call", () => {
  it("gets the in-flight call's envelope under its own call id, marked replayed, with the run's budget now, and closes its trace", () => {
    const run = runMeta({ counters: { calls_used: 7, writes_used: 2, destructive_used: 1 } });
    const original = upstreamEnvelope(run, "call_sender", "idk_x", "success");
    const step = joinedAnswer(run, original, "call_joiner", NOW + 50);
    const { envelope } = step;
    expect(envelope).toEqual({
      ...original,
      call_id: "call_joiner",
      replayed: true,
      budget: {
        calls_left: 13,
        writes_left: 3,
        destructive_left: 0,
        deadline_ms_left: run.deadline_at - NOW - 50,
      },
    });
    expect(step.writes).toEqual([
      { kind: "trace_close", call_id: "call_joiner", completion: completionOf(envelope, NOW + 50) },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// whyCannotExecute, sweepApprovals, endRun
// ---------------------------------------------------------------------------------------------

describe("whether a pending approval can still execute", () => {
  const call = agentCall(REFUND);
  const approval = approvalOf(call);

  it("it can while the run is open, before its deadline and the window, under the same policy, with budget left", () => {
    expect(whyCannotExecute(runMeta(), ZERO, approval, NOW, POLICY)).toBeNull();
  });

  it("it cannot from the instant the run's deadline or the window is reached", () => {
    const run = runMeta({ deadline_at: NOW + 10 });
    expect(whyCannotExecute(run, ZERO, approval, NOW + 9, POLICY)).toBeNull();
    expect(whyCannotExecute(run, ZERO, approval, NOW + 10, POLICY)).toBe("the run passed its deadline");
    const windowEnd = Date.parse(approval.expires_at);
    expect(whyCannotExecute(runMeta(), ZERO, approval, windowEnd - 1, POLICY)).toBeNull();
    expect(whyCannotExecute(runMeta(), ZERO, approval, windowEnd, POLICY)).toBe(
      "nobody decided within the approval window",
    );
  });

  it("names the first reason in order: ended, deadline, window, policy, budget", () => {
    const spent = { ...ZERO, destructive_used: 1 };
    const late = approvalOf(call, { expires_at: new Date(NOW).toISOString(), policy_version: OLD_POLICY });
    expect(whyCannotExecute(runMeta({ state: "closed", deadline_at: NOW }), spent, late, NOW, POLICY)).toBe(
      "the run was ended",
    );
    expect(whyCannotExecute(runMeta({ deadline_at: NOW }), spent, late, NOW, POLICY)).toBe(
      "the run passed its deadline",
    );
    expect(whyCannotExecute(runMeta(), spent, late, NOW, POLICY)).toBe(
      "nobody decided within the approval window",
    );
    expect(
      whyCannotExecute(runMeta(), spent, approvalOf(call, { policy_version: OLD_POLICY }), NOW, POLICY),
    ).toBe("the policy changed since it was requested");
    expect(whyCannotExecute(runMeta(), spent, approval, NOW, POLICY)).toBe(
      "the run's max_destructive budget is spent",
    );
  });

  it("does not judge the policy when no version is given", () => {
    expect(
      whyCannotExecute(runMeta(), ZERO, approvalOf(call, { policy_version: OLD_POLICY }), NOW, null),
    ).toBeNull();
  });

  it("judges the budget of the approval's own side effect, with the counters it is given", () => {
    const ticket = approvalOf(agentCall(URGENT_TICKET));
    const writesSpent = { ...ZERO, writes_used: DEFAULT_LIMITS.max_writes };
    expect(whyCannotExecute(runMeta(), { ...ZERO, destructive_used: 1 }, ticket, NOW, POLICY)).toBeNull();
    expect(whyCannotExecute(runMeta(), writesSpent, ticket, NOW, POLICY)).toBe(
      "the run's max_writes budget is spent",
    );
    expect(whyCannotExecute(runMeta({ counters: writesSpent }), ZERO, ticket, NOW, POLICY)).toBeNull();
  });
});

describe("the sweep", () => {
  const refund = agentCall(REFUND);
  const other = agentCall(OTHER_REFUND);
  const ticket = agentCall(URGENT_TICKET);
  const email = agentCall(EMAIL);
  const fine = approvalOf(ticket, { id: "apr_fine" });
  const lapsed = approvalOf(email, { id: "apr_window", expires_at: new Date(NOW - 1).toISOString() });
  const oldPolicy = approvalOf(other, { id: "apr_policy", policy_version: OLD_POLICY });
  const overBudget = approvalOf(refund, { id: "apr_budget" });
  const decided = approvalOf(refund, { id: "apr_decided", state: "rejected" });
  const all = [fine, lapsed, oldPolicy, overBudget, decided];

  it("expires exactly the approvals that can no longer execute, each with its own reason", () => {
    const run = runMeta({ counters: { ...ZERO, destructive_used: 1 } });
    const expire = (id: string, reason: string): Write => ({
      kind: "approval_state",
      id,
      state: "expired",
      decision: { at: NOW, by: null, by_name: null, reason },
    });
    expect(sweepApprovals(run, all, NOW, POLICY)).toEqual([
      expire("apr_window", "nobody decided within the approval window"),
      expire("apr_policy", "the policy changed since it was requested"),
      expire("apr_budget", "the run's max_destructive budget is spent"),
    ]);
  });

  it("expires nothing while every pending approval can still execute", () => {
    expect(sweepApprovals(runMeta(), [fine, overBudget], NOW, POLICY)).toEqual([]);
  });

  it("past the run's deadline, expires every pending approval saying so", () => {
    const run = runMeta({ deadline_at: NOW });
    const writes = sweepApprovals(run, all, NOW, POLICY);
    expect(writes.map((write) => (write.kind === "approval_state" ? write.id : null))).toEqual([
      "apr_fine",
      "apr_window",
      "apr_policy",
      "apr_budget",
    ]);
    for (const write of ofKind(writes, "approval_state")) {
      expect(write.decision?.reason).toBe("the run passed its deadline");
    }
  });

  it("without a policy version, keeps an approval asked under another policy", () => {
    expect(sweepApprovals(runMeta(), [oldPolicy], NOW, null)).toEqual([]);
  });

  it("ending the run closes it, then expires every pending approval because the run was ended", () => {
    const writes = endRun(runMeta(), all, NOW);
    expect(writes[0]).toEqual({ kind: "close_run", at: NOW });
    expect(writes.slice(1)).toEqual(
      ["apr_fine", "apr_window", "apr_policy", "apr_budget"].map((id) => ({
        kind: "approval_state",
        id,
        state: "expired",
        decision: { at: NOW, by: null, by_name: null, reason: "the run was ended" },
      })),
    );
  });

  it("ending an ended run writes nothing", () => {
    expect(endRun(runMeta({ state: "closed", ended_at: NOW - 5 }), all, NOW)).toEqual([]);
  });
});

describe("a spend expires the pending approvals that needed it, in the same writes", () => {
  const waitingRefund = approvalOf(agentCall(OTHER_REFUND), {
    id: "apr_waitingrefund0000000000",
    idempotency_key: "idk_waiting_refund",
  });
  const waitingTicket = approvalOf(agentCall(URGENT_TICKET), {
    id: "apr_waitingticket0000000000",
    idempotency_key: "idk_waiting_ticket",
  });
  const spentFor = (id: string) => ({
    kind: "approval_state",
    id,
    state: "expired",
    decision: { at: NOW, by: null, by_name: null, reason: "the run's max_destructive budget is spent" },
  });

  it("a key sent spends the effect budget and expires the pending approvals needing it before the request leaves", () => {
    const call = agentCall(SMALL_REFUND);
    const step = admitCall(viewOf(runMeta(), { pending: [waitingRefund, waitingTicket] }), call);
    if (step.kind !== "send") throw new Error("expected a send");
    expect(kinds(step.writes)).toEqual(["trace_open", "counters", "key_send", "approval_state"]);
    expect(countersWritten(step.writes)).toEqual({ calls_used: 1, writes_used: 0, destructive_used: 1 });
    // The ticket waits for a write, which is still there to spend.
    expect(ofKind(step.writes, "approval_state")).toEqual([spentFor(waitingRefund.id)]);
  });

  it("a call held for a human spends no effect budget and expires nothing", () => {
    const step = admitCall(viewOf(runMeta(), { pending: [waitingRefund] }), agentCall(REFUND));
    expect(ofKind(step.writes, "approval_state")).toEqual([]);
  });

  it("after a settlement, the pending approvals the run's spending left without budget expire with it", () => {
    const call = agentCall(SMALL_REFUND);
    const run = runMeta({ counters: { calls_used: 1, writes_used: 0, destructive_used: 1 } });
    const envelope = upstreamEnvelope(run, call.call_id, call.key, "success");
    const writes = settleOf(
      keyOf(call),
      null,
      envelope,
      completionOf(envelope, NOW),
      call.call_id,
      null,
      run,
      [waitingRefund, waitingTicket],
    );
    expect(kinds(writes)).toEqual(["key_settle", "trace_close", "approval_state"]);
    expect(ofKind(writes, "approval_state")).toEqual([spentFor(waitingRefund.id)]);
  });

  it("a read's settlement spends no effect budget and sweeps nothing", () => {
    const run = runMeta({ counters: { calls_used: 1, writes_used: 0, destructive_used: 1 } });
    const envelope = success(context(run, "call_r", "lookup_order", null, run.counters, NOW), {});
    const writes = settleOf(null, null, envelope, completionOf(envelope, NOW), "call_r", null, run, [
      waitingRefund,
    ]);
    expect(kinds(writes)).toEqual(["trace_close"]);
  });

  it("an operator's approval spends the budget and expires the other approvals needing it, never itself", () => {
    const call = agentCall(REFUND);
    const approved = approvalOf(call);
    const step = decideOn(
      runMeta(),
      approved,
      recordOf(call, "held"),
      TOOL("issue_refund"),
      decision("approve"),
      [approved, waitingRefund, waitingTicket],
    );
    if (step.kind !== "send") throw new Error("expected a send");
    expect(kinds(step.writes)).toEqual([
      "approval_state",
      "trace_open",
      "counters",
      "key_send",
      "approval_state",
    ]);
    expect(ofKind(step.writes, "approval_state").map((write) => [write.id, write.state])).toEqual([
      [approved.id, "approved"],
      [waitingRefund.id, "expired"],
    ]);
  });

  it("a read's admission, held until its outcome, commits with it under the counters the run has now", () => {
    const call = agentCall(READ);
    const admitted = admitCall(viewOf(runMeta()), call);
    const later = runMeta({ counters: { calls_used: 3, writes_used: 1, destructive_used: 0 } });
    const envelope = success(context(later, call.call_id, "lookup_order", null, later.counters, NOW), {});
    const { writes } = settleSend({
      run: later,
      call_id: call.call_id,
      key: null,
      record: null,
      approval: null,
      pending: [],
      admission: admitted.writes,
      envelope,
      completion: completionOf(envelope, NOW),
      taint: null,
      now: NOW,
    });
    expect(kinds(writes)).toEqual(["trace_open", "counters", "trace_close"]);
    expect(countersWritten(writes)).toEqual(later.counters);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: random event sequences against an in-memory model of the ledger
// ---------------------------------------------------------------------------------------------

interface TraceRow {
  digest: string;
  actor: string;
  error_code: string | null;
}

interface Model {
  run: RunMeta;
  keys: Map<string, CallRecord>;
  approvals: Map<string, ApprovalRecord>;
  trace: Map<string, TraceRow>;
  now: number;
  policy: string;
  /** Keys whose request is on its way from this instance, with the call that sent it. */
  inflight: Map<string, string>;
  /** Every key ever sent, with its side effect, and how many times. */
  sent: Map<string, { side_effect: string; sends: number }>;
  maxOpen: number;
}

/** Mimics `commitWrites` over plain maps. */
function applyWrites(model: Model, writes: readonly Write[]): void {
  for (const write of writes) {
    switch (write.kind) {
      case "counters":
        model.run = { ...model.run, counters: write.counters };
        break;
      case "close_run":
        model.run = { ...model.run, state: "closed", ended_at: write.at };
        break;
      case "taint":
        if (model.run.tainted_by === null) model.run = { ...model.run, tainted_by: write.taint };
        break;
      case "trace_open":
        if (model.trace.has(write.entry.call_id))
          throw new Error(`trace ${write.entry.call_id} opened twice`);
        model.trace.set(write.entry.call_id, {
          digest: write.entry.call_digest,
          actor: write.entry.actor,
          error_code: null,
        });
        break;
      case "trace_close": {
        const row = model.trace.get(write.call_id);
        if (row) row.error_code = write.completion.error_code;
        break;
      }
      case "key_hold":
        if (model.keys.has(write.record.key)) throw new Error(`key ${write.record.key} held twice`);
        model.keys.set(write.record.key, Object.freeze({ ...write.record }));
        break;
      case "key_send": {
        const existing = model.keys.get(write.key);
        // The stored request is never replaced (ON CONFLICT keeps it).
        model.keys.set(
          write.key,
          Object.freeze(
            existing
              ? { ...existing, state: "sending" as const, sends: existing.sends + 1 }
              : {
                  key: write.key,
                  tool: write.tool,
                  side_effect: write.side_effect,
                  state: "sending" as const,
                  request: write.request,
                  envelope: null,
                  sends: 1,
                },
          ),
        );
        break;
      }
      case "key_settle": {
        const existing = model.keys.get(write.key);
        if (!existing) throw new Error(`settled unknown key ${write.key}`);
        model.keys.set(
          write.key,
          Object.freeze({ ...existing, state: write.state, envelope: write.envelope }),
        );
        break;
      }
      case "approval_open":
        model.approvals.set(write.approval.id, Object.freeze({ ...write.approval }));
        break;
      case "approval_state": {
        const existing = model.approvals.get(write.id);
        if (!existing) throw new Error(`unknown approval ${write.id}`);
        model.approvals.set(
          write.id,
          Object.freeze({
            ...existing,
            state: write.state,
            ...(write.decision
              ? {
                  decided_at: new Date(write.decision.at).toISOString(),
                  decided_by: write.decision.by,
                  decision_reason: write.decision.reason,
                }
              : {}),
            ...(write.result ? { result: write.result } : {}),
          }),
        );
        break;
      }
    }
  }
}

const TEMPLATES: [string, Args][] = [
  READ,
  TICKET,
  URGENT_TICKET,
  REFUND,
  OTHER_REFUND,
  SMALL_REFUND,
  EMAIL,
  INVALID,
];

type Event =
  | { kind: "call"; template: number }
  | { kind: "decide"; pick: number; approve: boolean }
  | { kind: "settle"; pick: number; outcome: UpstreamOutcome }
  | { kind: "restart" }
  | { kind: "tick"; ms: number }
  | { kind: "alarm" }
  | { kind: "policy_change" }
  | { kind: "end" };

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({ kind: fc.constant("call" as const), template: fc.nat(TEMPLATES.length - 1) }),
  },
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("decide" as const), pick: fc.nat(8), approve: fc.boolean() }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("settle" as const),
      pick: fc.nat(8),
      outcome: fc.constantFrom<UpstreamOutcome>("success", "retryable", "terminal"),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: "restart" as const }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 15_000 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "alarm" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "policy_change" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "end" as const }) },
);

const limitsArb: fc.Arbitrary<RunLimits> = fc.record({
  max_calls: fc.integer({ min: 1, max: 20 }),
  max_writes: fc.integer({ min: 0, max: 3 }),
  max_destructive: fc.integer({ min: 0, max: 3 }),
  deadline_s: fc.integer({ min: 30, max: 120 }),
});

function pendingOf(model: Model): ApprovalRecord[] {
  return [...model.approvals.values()].filter((approval) => approval.state === "pending");
}

function approvalByKey(model: Model, key: string): ApprovalRecord | null {
  return [...model.approvals.values()].find((approval) => approval.idempotency_key === key) ?? null;
}

/** Checks every key_send of an event against the keys as they were before it, then counts it. */
function checkSends(model: Model, writes: readonly Write[]): void {
  for (const send of ofKind(writes, "key_send")) {
    const before = model.keys.get(send.key);
    const earlier = model.sent.get(send.key);
    // Never while a request of the key is on its way from this instance.
    expect(model.inflight.has(send.key)).toBe(false);
    if (earlier) {
      // A second send of a key is a resend of a key in doubt (or cut off by a restart), with its stored bytes.
      expect(["in_doubt", "sending"]).toContain(before?.state);
      expect(send.request).toBe(before?.request);
    } else {
      expect(before === undefined || before.state === "held").toBe(true);
      if (before) expect(send.request).toBe(before.request);
    }
    model.sent.set(send.key, { side_effect: send.side_effect, sends: (earlier?.sends ?? 0) + 1 });
  }
}

function checkInvariants(model: Model): void {
  const { counters, limits } = model.run;
  expect(counters.calls_used).toBeLessThanOrEqual(limits.max_calls);
  expect(counters.writes_used).toBeLessThanOrEqual(limits.max_writes);
  expect(counters.destructive_used).toBeLessThanOrEqual(limits.max_destructive);
  // The effect caps count executions: one per distinct key ever sent, whatever the resends.
  const distinct = (effect: string) =>
    [...model.sent.values()].filter((sent) => sent.side_effect === effect).length;
  expect(counters.writes_used).toBe(distinct("write"));
  expect(counters.destructive_used).toBe(distinct("destructive"));
  const open = pendingOf(model).filter((approval) => Date.parse(approval.expires_at) > model.now);
  expect(open.length).toBeLessThanOrEqual(model.maxOpen);
  for (const approval of pendingOf(model)) {
    expect(model.keys.get(approval.idempotency_key)?.state).toBe("held");
    expect(Date.parse(approval.expires_at)).toBeLessThanOrEqual(model.run.deadline_at);
  }
}

/** How often the property reached each interesting transition, so it cannot pass vacuously. */
const reached = {
  approval_opened: 0,
  told_to_wait: 0,
  approval_expired_answer: 0,
  approved_and_sent: 0,
  rejected: 0,
  joined: 0,
  resent: 0,
  settled_in_doubt: 0,
  executed: 0,
  swept: 0,
  effect_budget_refusal: 0,
};

function runEvent(model: Model, event: Event): void {
  switch (event.kind) {
    case "call": {
      const template = TEMPLATES[event.template];
      if (!template) throw new Error("no template");
      const call = agentCall(template, { now: model.now, policy_version: model.policy });
      const key = call.key;
      const view: CallView = {
        run: model.run,
        record: key ? (model.keys.get(key) ?? null) : null,
        approval: key ? approvalByKey(model, key) : null,
        // As the ledger reads it: the pending approvals for a keyed call only.
        pending: key ? pendingOf(model) : [],
        earlier_identical: [...model.trace.values()].filter(
          (row) =>
            row.digest === call.digest && row.actor === "agent" && row.error_code !== "approval_required",
        ).length,
        max_open_approvals: model.maxOpen,
        inflight: key !== null && model.inflight.has(key),
        claim: null,
      };
      const step = admitCall(view, call);
      checkSends(model, step.writes);
      applyWrites(model, step.writes);
      if (ofKind(step.writes, "approval_open").length > 0) reached.approval_opened += 1;
      if (ofKind(step.writes, "approval_state").length > 0) reached.swept += 1;
      if (step.kind === "send") {
        if (view.record !== null) reached.resent += 1;
        if (step.key === null) {
          const envelope = upstreamEnvelope(model.run, call.call_id, null, "success");
          applyWrites(
            model,
            settleOf(null, null, envelope, completionOf(envelope, model.now), call.call_id, null, model.run),
          );
        } else {
          model.inflight.set(step.key, call.call_id);
        }
      } else if (step.kind === "join") {
        reached.joined += 1;
        expect(model.inflight.has(step.key)).toBe(true);
      } else if (step.envelope.error?.code === "approval_expired") {
        reached.approval_expired_answer += 1;
      } else if (
        step.envelope.error?.details?.limit === "max_writes" ||
        step.envelope.error?.details?.limit === "max_destructive"
      ) {
        reached.effect_budget_refusal += 1;
      } else if (step.envelope.error?.code === "approval_required") {
        reached.told_to_wait += 1;
        // Told to wait only for an approval that can still run.
        const id = step.envelope.error.details?.approval_id;
        expect(step.envelope.approval?.id).toBe(id);
        const approval = typeof id === "string" ? model.approvals.get(id) : undefined;
        if (!approval) throw new Error(`approval_required names unknown approval ${String(id)}`);
        expect(approval.state).toBe("pending");
        expect(whyCannotExecute(model.run, model.run.counters, approval, model.now, model.policy)).toBeNull();
      }
      return;
    }
    case "decide": {
      const all = [...model.approvals.values()];
      const approval = all[event.pick % (all.length + 1)] ?? null;
      const record = approval ? (model.keys.get(approval.idempotency_key) ?? null) : null;
      const callId = nextCallId();
      const step = decideOn(
        model.run,
        approval,
        record,
        approval ? TOOL(approval.tool) : undefined,
        {
          decision: event.approve ? "approve" : "reject",
          operator: "operator:prop",
          operator_name: null,
          operator_roles: ["support_lead"],
          reason: null,
          call_id: callId,
          now: model.now,
          policy_version: model.policy,
        },
        pendingOf(model),
      );
      checkSends(model, step.writes);
      applyWrites(model, step.writes);
      if (step.kind === "send") {
        expect(event.approve).toBe(true);
        reached.approved_and_sent += 1;
        model.inflight.set(step.key, callId);
      } else if (ofKind(step.writes, "approval_state")[0]?.state === "rejected") {
        reached.rejected += 1;
      }
      return;
    }
    case "settle": {
      const inflight = [...model.inflight.entries()];
      const picked = inflight[event.pick % Math.max(1, inflight.length)];
      if (!picked) return;
      const [key, callId] = picked;
      const envelope = upstreamEnvelope(model.run, callId, key, event.outcome);
      const { writes } = settleSend({
        run: model.run,
        call_id: callId,
        key,
        record: model.keys.get(key) ?? null,
        approval: approvalByKey(model, key),
        pending: pendingOf(model),
        admission: null,
        envelope,
        completion: completionOf(envelope, model.now),
        taint: null,
        now: model.now,
      });
      checkSends(model, writes);
      applyWrites(model, writes);
      model.inflight.delete(key);
      if (event.outcome === "retryable") reached.settled_in_doubt += 1;
      if (ofKind(writes, "approval_state").some((write) => write.state === "executed")) reached.executed += 1;
      if (ofKind(writes, "approval_state").some((write) => write.state === "expired")) reached.swept += 1;
      return;
    }
    case "restart":
      // The instance is evicted: whatever was in flight is lost, its keys stay "sending".
      model.inflight.clear();
      return;
    case "tick":
      model.now += event.ms;
      return;
    case "alarm": {
      const writes = alarmRings(model.run, pendingOf(model), model.now, model.policy);
      if (writes.length > 0) reached.swept += 1;
      applyWrites(model, writes);
      return;
    }
    case "policy_change":
      model.policy = `${model.policy}'`;
      return;
    case "end":
      applyWrites(model, endRun(model.run, pendingOf(model), model.now));
      return;
  }
}

describe("property: random event sequences", () => {
  it("never exceed a limit, send a key twice only to resend it in doubt, and only tell agents to wait for approvals that can run", () => {
    fc.assert(
      fc.property(
        limitsArb,
        fc.integer({ min: 1, max: 3 }),
        fc.array(eventArb, { minLength: 1, maxLength: 40 }),
        (limits, maxOpen, events) => {
          const model: Model = {
            run: runMeta({ limits, deadline_at: T0 + limits.deadline_s * 1000 }),
            keys: new Map(),
            approvals: new Map(),
            trace: new Map(),
            now: NOW,
            policy: POLICY,
            inflight: new Map(),
            sent: new Map(),
            maxOpen,
          };
          for (const event of events) {
            runEvent(model, event);
            checkInvariants(model);
          }
        },
      ),
      plan({ seed: 20260101, numRuns: 600 }),
    );
    for (const [transition, times] of Object.entries(reached)) {
      expect(times, `the property never reached ${transition}`).toBeGreaterThan(0);
    }
  });
});
