import type { SideEffect } from "../catalog/define-tool";
import type { FaultInjection } from "../config/fault-injection";
import type { FailureSpec, Problem } from "../wire/envelope";
import type { ScenarioStepInput } from "../wire/scenario";
import { type FaultPlan, faultFits } from "./modes";
import {
  checkScenario,
  faultFromHeaders,
  faultInjectionOff,
  hasFaultHeaders,
  type ScenarioStep,
  type ToolSideEffects,
} from "./scenario";

/** What the orchestrator asked for, accepted, or refused with a message and field-level problems. */
export type Accepted<T> = { ok: true; value: T } | { ok: false; message: string; problems: Problem[] };

/**
 * The scenario of `POST /v1/runs`. Where fault injection is off it is refused rather than ignored:
 * an orchestrator that thinks it is testing against the sandbox learns that it is not.
 */
export function acceptScenario(
  steps: readonly ScenarioStepInput[] | undefined,
  injection: FaultInjection,
  tools: ToolSideEffects,
): Accepted<ScenarioStep[]> {
  if (steps === undefined) return { ok: true, value: [] };
  if (injection === "off") {
    return {
      ok: false,
      message: "This environment does not inject faults: open the run without a scenario.",
      problems: [faultInjectionOff("scenario")],
    };
  }
  const checked = checkScenario(steps, tools);
  if (!checked.ok) {
    return {
      ok: false,
      message: "The scenario is invalid. Fix the fields listed in problems.",
      problems: checked.problems,
    };
  }
  return { ok: true, value: checked.steps };
}

/** The X-Sandbox-Fault headers of one `POST /v1/runs/{id}/calls`, refused likewise where injection is off. */
export function acceptFaultHeaders(
  header: (name: string) => string | undefined,
  injection: FaultInjection,
): Accepted<FaultPlan | null> {
  if (!hasFaultHeaders(header)) return { ok: true, value: null };
  if (injection === "off") {
    return {
      ok: false,
      message: "This environment does not inject faults: remove the X-Sandbox-Fault header.",
      problems: [faultInjectionOff("X-Sandbox-Fault")],
    };
  }
  const parsed = faultFromHeaders(header);
  if (!parsed.ok) {
    return {
      ok: false,
      message: "The X-Sandbox-Fault headers are invalid. Fix the fields listed in problems.",
      problems: parsed.problems,
    };
  }
  return { ok: true, value: parsed.fault };
}

/**
 * A call's fault that its tool cannot suffer (a stale refund, a silent lookup), as the refusal to
 * answer with; null when it fits or there is none. Checked once the tool is known, in the ledger.
 */
export function refuseUnfitFault(
  fault: FaultPlan | null,
  tool: { name: string; side_effect: SideEffect } | null,
): FailureSpec | null {
  if (!fault || !tool || faultFits(fault.mode, tool.side_effect)) return null;
  return {
    code: "validation_error",
    message: `X-Sandbox-Fault "${fault.mode}" cannot apply to ${tool.name}, a ${tool.side_effect} tool.`,
    problems: [
      {
        field: "X-Sandbox-Fault",
        reason: `"${fault.mode}" does not fit a ${tool.side_effect} tool`,
        hint: "stale, injection and large fit reads; partial_success and silent_failure fit writes; the rest fit any tool.",
      },
    ],
  };
}
