import type { Envelope } from "../../../src/wire/envelope";
import {
  type AgentCall,
  argsSigOf,
  canonical,
  effectBudgetSpent,
  externalIdOf,
  type KeyState,
  keySigOf,
  type Lifecycle,
  type RunModel,
  SIDE_EFFECT,
} from "./reference";
import { storedErrorCode } from "./system";
import { shown, violated } from "./violation";

/**
 * The run guarantees (test/workerd/model/violation.ts) that one agent call's answers must satisfy, given what the
 * model knew before the call: keys, validation, waits, refusals, stored outcomes and replays.
 */

/** What the model knew before one agent call (or burst) was made. */
export interface CallContext {
  run: RunModel;
  call: AgentCall;
  keyBefore: KeyState;
  keyNameBefore: string | null;
  lifecycleBefore: Lifecycle;
  budgetSpentBefore: boolean;
  validatedBefore: boolean;
}

export function callContext(run: RunModel, call: AgentCall): CallContext {
  const key = run.keys.get(keySigOf(call));
  return {
    run,
    call,
    keyBefore: key?.state ?? { kind: "unsent" },
    keyNameBefore: key?.key ?? null,
    lifecycleBefore: run.lifecycle,
    budgetSpentBefore: effectBudgetSpent(run, call.tool),
    validatedBefore: run.validated.has(argsSigOf(call.tool, call.args)),
  };
}

/** The upstream's own verdict on the business request (a cancelled order, too large an amount). */
const UPSTREAM_BUSINESS_REFUSALS = new Set(["order_not_refundable", "amount_exceeds_refundable"]);
/** Refusals that, for a key that already completed, must say what is stored under it (rule 5). */
const REFUSALS = new Set(["repeat_detected", "run_closed", "budget_exhausted", "tool_changed"]);

function sameOutcome(a: Envelope, b: Envelope): boolean {
  return (
    a.outcome === b.outcome &&
    (a.error?.code ?? null) === (b.error?.code ?? null) &&
    canonical(a.data) === canonical(b.data)
  );
}

/**
 * Checks every answer to one agent call (several for a burst). Runs after the model learned from
 * the answers, so `ctx` holds what was known before and the run model what is known now.
 */
export async function checkAnswers(ctx: CallContext, answers: readonly Envelope[]): Promise<void> {
  for (const answer of answers) {
    checkKeyNaming(ctx, answer, answers);
    checkValidationHolds(ctx, answer, await upstreamCodeOf(ctx, answer));
    checkWaitIsNoDeadEnd(ctx, answer);
    checkRefusedWhenBudgetSpent(ctx, answer);
    checkClosedRunRefuses(ctx, answer);
    checkExpiryIsExplained(answer);
    checkStoredOutcome(ctx, answer);
  }
  checkReplays(ctx, answers);
}

/** Rule 6: the key depends on the validated arguments and the intent only, on both doors. */
function checkKeyNaming(ctx: CallContext, answer: Envelope, all: readonly Envelope[]): void {
  const named = answer.idempotency_key;
  if (named === null) return;
  if (ctx.keyNameBefore !== null && named !== ctx.keyNameBefore) {
    violated(
      "6",
      `the same call (other key order or door) got another key than before (${ctx.keyNameBefore})`,
      shown(answer),
    );
  }
  const others = all.map((a) => a.idempotency_key).filter((k): k is string => k !== null && k !== named);
  if (others.length > 0) violated("6", "identical concurrent calls got different keys", [named, ...others]);
  for (const other of ctx.run.keys.values()) {
    if (other.keySig !== keySigOf(ctx.call) && other.key === named) {
      violated("6", `two different calls share one key: ${other.keySig}`, shown(answer));
    }
  }
}

/**
 * The upstream's error code behind an answer: the one the answer names or, when the upstream's
 * refusal reached the proxy cut off (a `truncated` fault leaves a status and half a body), the one
 * the upstream stored under the key.
 */
async function upstreamCodeOf(ctx: CallContext, answer: Envelope): Promise<unknown> {
  // Only a validation_error is held to its code (rule 1): no other answer sends the harness to the records.
  if (answer.error?.code !== "validation_error") return undefined;
  const details = answer.error.details;
  if (details?.upstream_code !== undefined || details?.upstream_status === undefined)
    return details?.upstream_code;
  if (ctx.call.fault?.mode !== "truncated" || answer.idempotency_key === null) return undefined;
  return (await storedErrorCode(ctx.run.tenant, answer.idempotency_key)) ?? undefined;
}

/** Rule 1: a resend sends the same bytes, so nothing that passed validation fails it later. */
function checkValidationHolds(ctx: CallContext, answer: Envelope, upstreamCode: unknown): void {
  if (answer.error?.code !== "validation_error") return;
  if (upstreamCode === "idempotency_key_reused") {
    violated(
      "1",
      "a resend under the same key was refused upstream as idempotency_key_reused",
      shown(answer),
    );
  }
  if (typeof upstreamCode === "string" && UPSTREAM_BUSINESS_REFUSALS.has(upstreamCode)) return;
  if (ctx.validatedBefore) {
    violated(
      "1",
      "a validation_error for a call whose identical earlier call passed validation",
      shown(answer),
    );
  }
}

/** Rule 3: "wait for approval" only while the approval can still execute. */
function checkWaitIsNoDeadEnd(ctx: CallContext, answer: Envelope): void {
  if (answer.error?.code !== "approval_required") return;
  if (answer.approval?.state !== "pending") {
    violated("3", "approval_required without a pending approval to wait for", shown(answer));
  }
  if (ctx.run.approvals.get(answer.approval.id)?.voided) {
    violated("14", "an agent was told to wait for an approval its tool's change voided", shown(answer));
  }
  if (ctx.lifecycleBefore !== "open") {
    violated("3", `approval_required in a run that is ${ctx.lifecycleBefore}`, shown(answer));
  }
  if (ctx.budgetSpentBefore) {
    violated("3", "approval_required although the effect budget was already spent", shown(answer));
  }
  const budget = answer.budget;
  if (!budget) return;
  const left = SIDE_EFFECT[ctx.call.tool] === "write" ? budget.writes_left : budget.destructive_left;
  if (left <= 0 || budget.deadline_ms_left <= 0) {
    violated("3", "approval_required while the budget it would spend is empty", shown(answer));
  }
}

/** Rule 3: a call that needs an effect unit nobody has left is refused for good, opening nothing. */
function checkRefusedWhenBudgetSpent(ctx: CallContext, answer: Envelope): void {
  if (!ctx.budgetSpentBefore || ctx.keyBefore.kind !== "unsent" || ctx.lifecycleBefore !== "open") return;
  if (answer.outcome !== "terminal_failure") {
    violated(
      "3",
      `a ${ctx.call.tool} call with its effect budget spent was not refused for good`,
      shown(answer),
    );
  }
  if (answer.error?.code === "budget_exhausted") {
    const limit = answer.error.details?.limit;
    const effectLimit = SIDE_EFFECT[ctx.call.tool] === "write" ? "max_writes" : "max_destructive";
    if (limit !== effectLimit && limit !== "max_calls") {
      violated("3", `budget_exhausted names ${String(limit)}, not ${effectLimit}`, shown(answer));
    }
  }
}

/** Rule 3: after /end or the deadline the run refuses, terminally, and nothing waits. */
function checkClosedRunRefuses(ctx: CallContext, answer: Envelope): void {
  if (ctx.lifecycleBefore === "open") return;
  if (answer.outcome !== "terminal_failure") {
    violated("3", `a call to a run that is ${ctx.lifecycleBefore} was not refused for good`, shown(answer));
  }
}

/** Rule 3: an agent whose approval expired is told why, so it can stop instead of asking again. */
function checkExpiryIsExplained(answer: Envelope): void {
  if (answer.error?.code !== "approval_expired") return;
  const reason = answer.error.details?.reason;
  if (typeof reason !== "string" || reason.length === 0) {
    violated("3", "approval_expired without details.reason", shown(answer));
  }
}

/** Rule 5: a refusal of a completed key says what is stored; of a key in doubt, that nobody knows. */
function checkStoredOutcome(ctx: CallContext, answer: Envelope): void {
  const code = answer.error?.code;
  if (code === undefined || !REFUSALS.has(code) || SIDE_EFFECT[ctx.call.tool] === "read") return;
  const before = ctx.keyBefore;
  if (before.kind === "completed") {
    const first = before.first;
    const error = answer.error;
    if (first.outcome === "success") {
      if (error?.side_effect_confirmed !== true) {
        violated(
          "5",
          `${code} for a ${ctx.call.tool} whose key completed did not confirm the effect`,
          shown(answer),
        );
      }
      const id = externalIdOf(ctx.call.tool, first.data);
      if (id !== null && error?.external_id !== id) {
        violated("5", `${code} for a completed key does not name the effect ${id}`, shown(answer));
      }
    }
    const stored = (answer.observed_state as { stored_outcome?: Record<string, unknown> } | null)
      ?.stored_outcome;
    const expected = {
      ...(before.original ? { call_id: first.call_id } : {}),
      outcome: first.outcome,
      data: first.data,
      error_code: first.error?.code ?? null,
    };
    // The call id is only known when the model saw the original answer, not just a replay of it.
    const actual = stored && {
      ...(before.original ? { call_id: stored.call_id } : {}),
      outcome: stored.outcome,
      data: stored.data,
      error_code: stored.error_code,
    };
    if (canonical(actual ?? null) !== canonical(expected)) {
      violated("5", `${code} for a completed key does not carry its stored outcome`, {
        expected,
        answer: shown(answer),
      });
    }
    return;
  }
  const now = ctx.run.keys.get(keySigOf(ctx.call))?.state.kind;
  if (before.kind === "in_doubt" && now === "in_doubt" && answer.error?.side_effect_confirmed !== null) {
    violated("5", `${code} for a key in doubt claims to know the effect`, shown(answer));
  }
}

/** Rule 4: a replay is the first completed outcome again (or, for a burst, the shared one). */
function checkReplays(ctx: CallContext, answers: readonly Envelope[]): void {
  const originals = answers.filter((answer) => !answer.replayed);
  for (const replay of answers.filter((answer) => answer.replayed)) {
    if (ctx.keyBefore.kind === "completed") {
      if (!sameOutcome(replay, ctx.keyBefore.first)) {
        violated("4", "a replay differs from the first completed outcome", {
          first: shown(ctx.keyBefore.first),
          replay: shown(replay),
        });
      }
    } else if (originals.length > 0 && !originals.some((original) => sameOutcome(replay, original))) {
      violated("4", "a replay in a burst differs from the answer it shared", {
        originals: originals.map(shown),
        replay: shown(replay),
      });
    }
  }
}
