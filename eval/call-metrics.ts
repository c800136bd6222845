import type { CallRecord } from "../agents/client";
import { canonicalJson } from "../src/core/canonical-json";
import type { EvalCase, ExpectedCall } from "./case-types";

/**
 * How well an agent chose its calls, from the calls its client sent: the right tools with the right
 * arguments in the order the case expects, no call where none was wanted, and answers it could use
 * as they came. Pure, so the rules are unit-tested.
 */

/** The tool that pages through a large result: a read of an earlier answer, never a choice of tool. */
const PAGE_TOOL = "read_result_page";

/** A call as the tool it really reaches: `use_tool {name, arguments}` is a call of `name` with `arguments`. */
export function effectiveCall(tool: string, args: unknown): { tool: string; args: unknown } {
  if (tool === "use_tool" && typeof args === "object" && args !== null) {
    const { name, arguments: inner } = args as { name?: unknown; arguments?: unknown };
    if (typeof name === "string") return { tool: name, args: inner ?? {} };
  }
  return { tool, args };
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
}

/** One choice of call: the effective tool, its arguments and the orchestrator's intent. */
export interface Selection {
  tool: string;
  args: unknown;
  intent: string | null;
}

function sameSelection(a: Selection, b: Selection): boolean {
  return a.tool === b.tool && a.intent === b.intent && sameJson(a.args, b.args);
}

/**
 * The calls the agent chose, in the order they were sent: a call identical to the one chosen just
 * before it (a retry, a poll of a pending approval, a re-read, a parallel copy) is the same choice
 * again, and page reads are not choices of a tool.
 */
export function selectionsOf(calls: readonly CallRecord[]): Selection[] {
  const selections: Selection[] = [];
  for (const call of [...calls].sort((a, b) => a.n - b.n)) {
    const { tool, args } = effectiveCall(call.tool, call.args);
    if (tool === PAGE_TOOL) continue;
    const selection = { tool, args, intent: call.intent };
    const last = selections.at(-1);
    if (!last || !sameSelection(last, selection)) selections.push(selection);
  }
  return selections;
}

/** Whether a chosen call meets an expected one: the same tool, and every listed argument equal. */
export function meetsArgs(selection: Selection, expected: ExpectedCall): boolean {
  const want = effectiveCall(expected.tool, expected.args ?? {});
  if (selection.tool !== want.tool) return false;
  if (expected.args === undefined) return true;
  const have = (
    typeof selection.args === "object" && selection.args !== null ? selection.args : {}
  ) as Record<string, unknown>;
  const listed = (typeof want.args === "object" && want.args !== null ? want.args : {}) as Record<
    string,
    unknown
  >;
  return Object.entries(listed).every(([name, value]) => sameJson(have[name], value));
}

/** Whether a call reaches a tool the case rules out: every tool when the right plan is no call at all. */
export function isRuledOut(
  call: Pick<CallRecord, "tool" | "args">,
  uncalled: EvalCase["expect"]["uncalled"],
): boolean {
  if (uncalled === undefined) return false;
  if (uncalled === "all") return true;
  return uncalled.includes(call.tool) || uncalled.includes(effectiveCall(call.tool, call.args).tool);
}

/** When a call's answer reached the agent, in ms since the epoch. */
const answeredAt = (call: CallRecord) => Date.parse(call.started_at) + call.ms;

/**
 * Whether a success answer could be used as it came: its data was not cut into pages (no result
 * handle to follow with read_result_page), it is not flagged stale (older than a write the run
 * made), and the agent's next call (the first it sent after this answer arrived) is not the same
 * call again (same tool, arguments and intent), a retry or re-read because the answer would not do.
 */
export function isConsumable(call: CallRecord, calls: readonly CallRecord[]): boolean {
  if (call.envelope.outcome !== "success") return false;
  const handle = (call.envelope.data as { handle?: unknown } | null)?.handle;
  if (typeof handle === "string") return false;
  if ((call.envelope.observed_state as { stale?: unknown } | null)?.stale === true) return false;
  const arrived = answeredAt(call);
  const next = calls
    .filter((other) => other !== call && Date.parse(other.started_at) >= arrived)
    .sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at) || a.n - b.n)[0];
  if (!next) return true;
  const mine = { ...effectiveCall(call.tool, call.args), intent: call.intent };
  return !sameSelection(mine, { ...effectiveCall(next.tool, next.args), intent: next.intent });
}

/** One case's counts behind the agent's call-choice metrics. */
export interface CallChoiceCounts {
  /** Calls the case expects (0 when it states none: left out of the accuracies). */
  expected_calls: number;
  /** Expected calls whose place in the agent's choices holds the same tool. */
  right_tool_calls: number;
  /** ... and every argument the expectation lists equal. */
  right_args_calls: number;
  /** Whether the case rules out some tools, or every call. */
  restraint_expected: boolean;
  /** Calls of a ruled-out tool, or any call when the right plan is no call at all. */
  unwanted_calls: number;
  /** Success answers to calls other than page reads. */
  answers: number;
  /** ... that the agent could use as they came (see isConsumable). */
  consumable_answers: number;
}

export function countCallChoices(expect: EvalCase["expect"], calls: readonly CallRecord[]): CallChoiceCounts {
  const expected = expect.calls ?? [];
  const selections = selectionsOf(calls);
  const at = (index: number) => selections[index];
  const answered = calls.filter(
    (call) => call.envelope.outcome === "success" && effectiveCall(call.tool, call.args).tool !== PAGE_TOOL,
  );
  return {
    expected_calls: expected.length,
    right_tool_calls: expected.filter(
      (want, index) => at(index)?.tool === effectiveCall(want.tool, want.args ?? {}).tool,
    ).length,
    right_args_calls: expected.filter((want, index) => {
      const selection = at(index);
      return selection !== undefined && meetsArgs(selection, want);
    }).length,
    restraint_expected: expect.uncalled === "all" || (expect.uncalled?.length ?? 0) > 0,
    unwanted_calls: calls.filter((call) => isRuledOut(call, expect.uncalled)).length,
    answers: answered.length,
    consumable_answers: answered.filter((call) => isConsumable(call, calls)).length,
  };
}

/** Counts of a run that could not be judged: no evidence, so it is left out of every call-choice metric. */
export const NO_CALL_CHOICES: CallChoiceCounts = {
  expected_calls: 0,
  right_tool_calls: 0,
  right_args_calls: 0,
  restraint_expected: false,
  unwanted_calls: 0,
  answers: 0,
  consumable_answers: 0,
};

/** The four per-agent call-choice metrics; null when no case gives the metric a denominator. */
export interface CallChoiceMetrics {
  /** Expected calls whose place in the agent's choices holds the right tool, over expected calls. */
  tool_selection_accuracy: number | null;
  /** ... the right tool with the listed arguments, over expected calls. */
  argument_accuracy: number | null;
  /** Cases with expected calls (the accuracies' cases; the others are left out). */
  cases_with_expected_calls: number;
  /** Cases that rule out tools or every call where the agent made an unwanted call, over such cases. */
  mis_trigger_rate: number | null;
  unwanted_calls: number;
  /** Success answers used as they came, over success answers (page reads left out). */
  consumability_rate: number | null;
}

export function summarizeCallChoices(counts: readonly CallChoiceCounts[]): CallChoiceMetrics {
  const sum = (pick: (c: CallChoiceCounts) => number) => counts.reduce((total, c) => total + pick(c), 0);
  const ratio = (top: number, bottom: number) => (bottom === 0 ? null : top / bottom);
  const expected = sum((c) => c.expected_calls);
  const restrained = counts.filter((c) => c.restraint_expected);
  return {
    tool_selection_accuracy: ratio(
      sum((c) => c.right_tool_calls),
      expected,
    ),
    argument_accuracy: ratio(
      sum((c) => c.right_args_calls),
      expected,
    ),
    cases_with_expected_calls: counts.filter((c) => c.expected_calls > 0).length,
    mis_trigger_rate: ratio(restrained.filter((c) => c.unwanted_calls > 0).length, restrained.length),
    unwanted_calls: sum((c) => c.unwanted_calls),
    consumability_rate: ratio(
      sum((c) => c.consumable_answers),
      sum((c) => c.answers),
    ),
  };
}
