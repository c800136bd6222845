import type { SideEffect } from "../catalog/define-tool";
import { assertNever, type Budget } from "../wire/envelope";
import type { Counters, RunLimits } from "../wire/run-status";

/** What a run has spent so far: the wire schema's type, reported as `used` by the run status. */
export type { Counters } from "../wire/run-status";

export type BudgetLimitName = keyof RunLimits | "deadline";

export type Charge = { ok: true } | { ok: false; limit: BudgetLimitName; message: string };

/** The budget block of an envelope: exact figures of what is left. */
export function budgetLeft(limits: RunLimits, counters: Counters, deadlineAt: number, now: number): Budget {
  return {
    calls_left: Math.max(0, limits.max_calls - counters.calls_used),
    writes_left: Math.max(0, limits.max_writes - counters.writes_used),
    destructive_left: Math.max(0, limits.max_destructive - counters.destructive_used),
    deadline_ms_left: Math.max(0, deadlineAt - now),
  };
}

/**
 * Whether one more dispatch may be charged. Budgets throw, not log: a run past its deadline or
 * its call limit gets a refusal that names the limit, and the agent loop has to stop.
 */
export function canChargeCall(
  limits: RunLimits,
  counters: Counters,
  deadlineAt: number,
  now: number,
): Charge {
  if (now >= deadlineAt) {
    return {
      ok: false,
      limit: "deadline",
      message: `The run passed its ${limits.deadline_s}s deadline; no more tool calls are accepted.`,
    };
  }
  if (counters.calls_used >= limits.max_calls) {
    return {
      ok: false,
      limit: "max_calls",
      message: `The run used all ${limits.max_calls} tool calls it was given (max_calls).`,
    };
  }
  return { ok: true };
}

/**
 * Whether a new side effect of this kind may be executed. Reads and replays never spend these.
 * A draft spends `max_writes`: it stores a record upstream, so an agent looping on drafts must hit
 * a limit like one looping on tickets; it does not spend `max_destructive`, since nothing reaches a
 * person until a destructive send (which spends its own unit).
 */
export function canSpendEffect(sideEffect: SideEffect, limits: RunLimits, counters: Counters): Charge {
  switch (sideEffect) {
    case "read":
      return { ok: true };
    case "draft":
    case "write":
      return counters.writes_used >= limits.max_writes
        ? {
            ok: false,
            limit: "max_writes",
            message: `The run executed all ${limits.max_writes} writes it was given (max_writes).`,
          }
        : { ok: true };
    case "destructive":
      return counters.destructive_used >= limits.max_destructive
        ? {
            ok: false,
            limit: "max_destructive",
            message: `The run executed all ${limits.max_destructive} destructive actions it was given (max_destructive).`,
          }
        : { ok: true };
    default:
      return assertNever(sideEffect);
  }
}

/** The counters after one more execution of a side effect of this kind. */
export function spendEffect(sideEffect: SideEffect, counters: Counters): Counters {
  switch (sideEffect) {
    case "read":
      return counters;
    case "draft":
    case "write":
      return { ...counters, writes_used: counters.writes_used + 1 };
    case "destructive":
      return { ...counters, destructive_used: counters.destructive_used + 1 };
    default:
      return assertNever(sideEffect);
  }
}
