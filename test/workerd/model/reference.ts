import type { ToolSpec } from "../../../src/catalog/define-tool";
import { catalog } from "../../../src/tools";
import type { Envelope } from "../../../src/wire/envelope";
import type { TestRun } from "../helpers";

/**
 * The reference model of the model-based test: what a run must look like from outside, reduced to
 * what the run guarantees (test/workerd/model/violation.ts) let a test assert. It is deliberately
 * simple: per run its lifecycle and counters, per idempotency key what the agent has learned about
 * it, per approval the key it is bound to. Whatever the model cannot know for certain (an answer
 * lost to a ledger restart) it marks as such instead of guessing.
 */

export const TENANTS = ["acme", "globex", "hooli"] as const;
export type TenantName = (typeof TENANTS)[number];

/**
 * The runs a sequence may hold: an acme, a globex and two hooli runs from its start, and a third
 * hooli run a command may open as it goes. hooli is the tenant whose value caps a sequence can
 * reach: its runs act on the same orders and share its caps.
 */
export const RUN_NAMES = ["acme", "globex", "hooli", "hooli#2", "hooli#3"] as const;
export type RunName = (typeof RUN_NAMES)[number];
export const LATER_RUNS = ["hooli#3"] as const;
export type LaterRunName = (typeof LATER_RUNS)[number];
export const FLEET_RUNS = ["hooli", "hooli#2", ...LATER_RUNS] as const;

export function tenantOfRun(name: RunName): TenantName {
  return name.startsWith("hooli") ? "hooli" : (name as TenantName);
}

export type ToolName = "lookup_order" | "create_internal_ticket" | "issue_refund";
export type SideEffect = "read" | "write" | "destructive";

export const SIDE_EFFECT: Record<ToolName, SideEffect> = {
  lookup_order: "read",
  create_internal_ticket: "write",
  issue_refund: "destructive",
};

const timeoutInCatalog = (tool: ToolName) => (catalog.find("support", tool) as ToolSpec).timeout_ms;

/**
 * The tools' timeouts in the catalog the worker serves (this test runs against the short-timeout
 * catalog, test/workerd/short-timeouts/catalog.ts): a fault has to hang longer than this to become a
 * timeout, and a credential may outlive its dispatch by 2 s past it.
 */
export const TIMEOUT_MS: Record<ToolName, number> = {
  lookup_order: timeoutInCatalog("lookup_order"),
  create_internal_ticket: timeoutInCatalog("create_internal_ticket"),
  issue_refund: timeoutInCatalog("issue_refund"),
};

/** A tool's timeout, for any tool name the upstream reports (null outside this test's pool). */
export function timeoutOf(tool: string): number | null {
  const entry = Object.entries(TIMEOUT_MS).find(([name]) => name === tool);
  return entry ? entry[1] : null;
}

export interface Limits {
  max_calls: number;
  max_writes: number;
  max_destructive: number;
}

export interface Counters {
  calls_used: number;
  writes_used: number;
  destructive_used: number;
}

/**
 * A per-call `X-Sandbox-Fault`. Only the hanging modes cost real seconds. `rate_limited` is the 4xx
 * the sandbox answers instead of the application (the proxy refuses a fault that does not fit the
 * tool before it is sent, so no other 4xx can meet a resend of the same bytes); `truncated` lets the
 * application act, then cuts the answer's body in half.
 */
export type HeaderFault =
  | { mode: "bad_gateway" }
  | { mode: "silent_failure" }
  | { mode: "truncated" }
  | { mode: "rate_limited"; retry_after_s: number }
  | { mode: "slow_success" | "hang"; hang_ms: number };

export type Door = "rest" | "mcp";

export interface AgentCall {
  run: RunName;
  tool: ToolName;
  /** Sent in this key order: the proxy must derive the same key and digest whatever the order. */
  args: Record<string, unknown>;
  intent: string | null;
  door: Door;
  fault: HeaderFault | null;
}

export type KeyState =
  /** Only the gate has answered so far (approval, budget, repeat): nothing was sent upstream. */
  | { kind: "unsent" }
  /** A send may have reached the upstream and its outcome is unknown: the next identical call resends. */
  | { kind: "in_doubt" }
  /** An answer was lost with a restarted ledger: the key may be in any state, so no strict check applies. */
  | { kind: "lost" }
  /** `first` is the first completed answer; `original` is false when only a replay of it was seen. */
  | { kind: "completed"; first: Envelope; original: boolean };

export interface KeyModel {
  keySig: string;
  /** The arguments as the agent last sent them: what another run may repeat. */
  args: Record<string, unknown>;
  argsSig: string;
  tool: ToolName;
  intent: string | null;
  /** The key the proxy named, once an answer carried it. */
  key: string | null;
  state: KeyState;
  /**
   * An operator approved other arguments for this call (approve with edit): their signature. The
   * call as asked must never reach the upstream from then on (rule 12); the edited one may, once.
   */
  editedArgsSig?: string;
}

export interface ApprovalModel {
  id: string;
  keySig: string;
  tool: ToolName;
  /** The state the approvals API showed after the last command that touched the run. */
  state: string;
  /** How many effects of other runs the approval listed when it was asked for (rule 9). */
  earlierEffects: number;
  /**
   * The people who tried to approve it and were not refused (an answer of 200, or a failure that may
   * have recorded them): under the two-person rule it executes only once two of them did (rule 11).
   */
  approvedBy: Set<string>;
  /**
   * A deploy changed its tool's contract while it was pending (`catalog-commands.ts`): it was asked
   * under a policy that no longer holds, so it must never execute, and no agent may wait for it (rule 14).
   */
  voided?: boolean;
}

export type Lifecycle = "open" | "ended" | "past_deadline";

export interface RunModel {
  name: RunName;
  tenant: TenantName;
  handle: TestRun;
  limits: Limits;
  lifecycle: Lifecycle;
  /** How many requests the sandbox had seen from this run when it ended or passed its deadline. */
  frozenRequests: number | null;
  /** The credentials the sandbox had been presented by then, as canonical JSON. */
  frozenCredentials: string | null;
  /** As `GET /v1/runs/{id}` reported them after the last command that touched the run. */
  counters: Counters;
  keys: Map<string, KeyModel>;
  /** Calls (tool + canonical arguments) that have been seen to pass validation. */
  validated: Set<string>;
  approvals: Map<string, ApprovalModel>;
  /** The agent's most recent call in this run: what a retrying agent sends again. */
  lastCall: AgentCall | null;
}

export interface ReferenceModel {
  /** The sequence's runs by name; a later run is absent until a command opens it. */
  runs: Partial<Record<RunName, RunModel>>;
  /** Which sequence this is, counting every one opened (shrinks included), as reports name runs. */
  sequence: number;
  /** The hooli orders this sequence refunds (fresh ones each sequence, so caps start low). */
  fleetOrders: readonly string[];
  /** The limits a later hooli run opens with. */
  fleetLimits: Limits;
  /** Hanging faults still allowed in this sequence: each may cost a tool timeout of real time. */
  slowFaultsLeft: number;
}

export function newRunModel(name: RunName, handle: TestRun, limits: Limits): RunModel {
  return {
    name,
    tenant: tenantOfRun(name),
    handle,
    limits,
    lifecycle: "open",
    frozenRequests: null,
    frozenCredentials: null,
    counters: { calls_used: 0, writes_used: 0, destructive_used: 0 },
    keys: new Map(),
    validated: new Set(),
    approvals: new Map(),
    lastCall: null,
  };
}

export function runOf(model: Readonly<ReferenceModel>, name: RunName): RunModel {
  const run = model.runs[name];
  if (!run) throw new Error(`check() admits a command on ${name} only once it is open`);
  return run;
}

export function openRunsOf(model: Readonly<ReferenceModel>): RunModel[] {
  return RUN_NAMES.flatMap((name) => model.runs[name] ?? []);
}

/**
 * A hooli order is generated as a slot (`H#0`…): the sequence's own orders fill it when the call is
 * made, so a sequence starts on orders no earlier sequence refunded.
 */
export function resolveCall(model: Readonly<ReferenceModel>, call: AgentCall): AgentCall {
  const slot = /^H#(\d)$/.exec(String(call.args.order_id ?? ""));
  if (!slot) return call;
  const order = model.fleetOrders[Number(slot[1])];
  const args = Object.fromEntries(
    Object.entries(call.args).map(([field, value]) => [field, field === "order_id" ? order : value]),
  );
  return { ...call, args };
}

/** JSON with object keys sorted at every depth: the model's own notion of "identical arguments". */
export function canonical(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
  return Object.fromEntries(entries.map(([key, inner]) => [key, sortKeys(inner)]));
}

/** The n-th ordering of the arguments' keys: the proxy must not care which one the agent used. */
export function reorderKeys(args: Record<string, unknown>, n: number): Record<string, unknown> {
  const entries = Object.entries(args);
  const ordered: Array<[string, unknown]> = [];
  let rest = n;
  while (entries.length > 0) {
    const [entry] = entries.splice(rest % entries.length, 1);
    rest = Math.floor(rest / (entries.length + 1));
    if (entry) ordered.push(entry);
  }
  return Object.fromEntries(ordered);
}

/** Identical calls as the repeat breaker counts them: same tool, same canonical arguments. */
export function argsSigOf(tool: ToolName, args: Record<string, unknown>): string {
  return `${tool} ${canonical(args)}`;
}

/** One idempotency key: an identical call under one orchestrator intent. */
export function keySigOf(call: Pick<AgentCall, "tool" | "args" | "intent">): string {
  return `${argsSigOf(call.tool, call.args)} intent=${call.intent ?? "-"}`;
}

export function keyModelOf(run: RunModel, call: AgentCall): KeyModel {
  const keySig = keySigOf(call);
  let model = run.keys.get(keySig);
  if (!model) {
    model = {
      keySig,
      args: call.args,
      argsSig: argsSigOf(call.tool, call.args),
      tool: call.tool,
      intent: call.intent,
      key: null,
      state: { kind: "unsent" },
    };
    run.keys.set(keySig, model);
  }
  return model;
}

/** Whether the run's budget for this kind of effect was spent when the model last looked. */
export function effectBudgetSpent(run: RunModel, tool: ToolName): boolean {
  switch (SIDE_EFFECT[tool]) {
    case "read":
      return false;
    case "write":
      return run.counters.writes_used >= run.limits.max_writes;
    case "destructive":
      return run.counters.destructive_used >= run.limits.max_destructive;
  }
}

/** The id of the effect a successful write created, as the tool's output names it. */
export function externalIdOf(tool: ToolName, data: unknown): string | null {
  const field =
    tool === "issue_refund" ? "refund_id" : tool === "create_internal_ticket" ? "ticket_id" : null;
  if (!field || data === null || typeof data !== "object") return null;
  const id = (data as Record<string, unknown>)[field];
  return typeof id === "string" ? id : null;
}

/**
 * An answer that settles its key: a success, or a terminal failure the upstream (or the proxy's
 * reading of it) produced that knows whether the effect happened, as opposed to a refusal by the
 * gate, the budget or the repeat breaker. An answer that does not know (`side_effect_confirmed:
 * null`) leaves the key in doubt, whatever its outcome: certainty only moves up.
 */
export function settlesKey(envelope: Envelope): boolean {
  if (envelope.outcome === "success") return true;
  const error = envelope.error;
  if (envelope.outcome !== "terminal_failure" || !error || error.side_effect_confirmed === null) return false;
  if (["silent_failure", "partial_success", "terminal_error"].includes(error.code)) return true;
  return typeof error.details?.upstream_status === "number";
}

/** An answer after which the upstream may or may not have acted. */
export function leavesKeyInDoubt(envelope: Envelope): boolean {
  const error = envelope.error;
  if (!error) return false;
  if (envelope.outcome === "retryable_failure") {
    return error.code === "timeout" || error.code === "transient_error" || error.code === "rate_limited";
  }
  // A terminal answer that does not know: an unreadable success, or a refusal met by a resend.
  return (
    envelope.outcome === "terminal_failure" &&
    error.side_effect_confirmed === null &&
    (error.code === "terminal_error" || typeof error.details?.upstream_status === "number")
  );
}

/** Codes that are only given after the arguments were validated. */
const AFTER_VALIDATION = new Set([
  "approval_required",
  "approval_rejected",
  "approval_expired",
  "timeout",
  "transient_error",
  "silent_failure",
  "partial_success",
  "terminal_error",
]);

export function passedValidation(envelope: Envelope): boolean {
  const code = envelope.error?.code;
  if (code === undefined) return true;
  if (code === "validation_error") return false;
  return envelope.idempotency_key !== null || AFTER_VALIDATION.has(code);
}

/**
 * Learns from the answers to one agent call (a burst answers several times): the key's name and
 * state, the approval it opened, whether its arguments passed validation. Originals are taken
 * before replays, so a replay never becomes the "first" outcome when the original was seen.
 */
export function learnFromAnswers(run: RunModel, call: AgentCall, answers: readonly Envelope[]): void {
  run.lastCall = call;
  const argsSig = argsSigOf(call.tool, call.args);
  for (const answer of answers) if (passedValidation(answer)) run.validated.add(argsSig);
  if (SIDE_EFFECT[call.tool] === "read") return;
  const key = keyModelOf(run, call);
  const ordered = [...answers.filter((a) => !a.replayed), ...answers.filter((a) => a.replayed)];
  for (const answer of ordered) {
    if (answer.idempotency_key !== null) key.key = answer.idempotency_key;
    if (answer.approval && answer.error?.code?.startsWith("approval_")) {
      run.approvals.set(answer.approval.id, {
        id: answer.approval.id,
        keySig: key.keySig,
        tool: call.tool,
        state: answer.approval.state,
        earlierEffects: Math.max(
          run.approvals.get(answer.approval.id)?.earlierEffects ?? 0,
          earlierEffectsOf(answer),
        ),
        approvedBy: run.approvals.get(answer.approval.id)?.approvedBy ?? new Set(),
        ...(run.approvals.get(answer.approval.id)?.voided ? { voided: true } : {}),
      });
    }
    learnKeyState(key, answer);
  }
}

/** The effects of other runs an approval_required answer names (`details.earlier_effects`). */
export function earlierEffectsOf(answer: Envelope): number {
  const earlier = (answer.error?.details as { earlier_effects?: unknown } | null | undefined)
    ?.earlier_effects;
  return Array.isArray(earlier) ? earlier.length : 0;
}

export function learnKeyState(key: KeyModel, answer: Envelope): void {
  if (key.state.kind === "completed") return;
  if (settlesKey(answer)) {
    key.state = { kind: "completed", first: answer, original: !answer.replayed };
  } else if (answer.error?.code === "internal_error") {
    key.state = { kind: "lost" };
  } else if (leavesKeyInDoubt(answer) && (key.state.kind !== "lost" || !answer.replayed)) {
    // A fresh send that failed unclearly proves the ledger holds the key in doubt, lost or not.
    key.state = { kind: "in_doubt" };
  }
}
