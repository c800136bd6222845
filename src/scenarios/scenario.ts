import type { SideEffect } from "../catalog/define-tool";
import type { Problem } from "../wire/envelope";
import {
  type FaultMode,
  FaultModeSchema,
  MAX_HANG_MS,
  MAX_RETRY_AFTER_S,
  type RunScenarioStep,
  type ScenarioStepInput,
} from "../wire/scenario";
import { defaultTimes, type FaultPlan, faultFits, takesHang, takesRetryAfter, toFaultPlan } from "./modes";

/**
 * A run's scenario: the upstream faults an orchestrator (never the model) asks for when it opens a
 * run in the sandbox. Each step fires on the run's next upstream requests it matches, `times` times,
 * in the order given, like faults armed in the sandbox itself.
 */

/** A step as stored: defaults filled in, so the run shows exactly what will be sent. */
export type ScenarioStep = RunScenarioStep;

/** The tools a scenario may name, with what they do to the world. */
export type ToolSideEffects = ReadonlyMap<string, SideEffect>;

/**
 * Checks what the schema cannot see (a tool of this namespace, a mode that fits it, numbers only
 * where the mode uses them) and fills in the defaults. Problems name the step and the field.
 */
export function checkScenario(
  steps: readonly ScenarioStepInput[],
  tools: ToolSideEffects,
): { ok: true; steps: ScenarioStep[] } | { ok: false; problems: Problem[] } {
  const problems: Problem[] = [];
  steps.forEach((step, index) => {
    const at = (field: string) => `scenario[${index}].${field}`;
    if (step.tool !== undefined && step.path_prefix !== undefined) {
      problems.push({
        field: at("path_prefix"),
        reason: "tool and path_prefix are both set",
        hint: "Match a step by tool or by path_prefix, not both.",
      });
    }
    if (step.tool !== undefined) {
      const sideEffect = tools.get(step.tool);
      if (sideEffect === undefined) {
        problems.push({
          field: at("tool"),
          reason: `"${step.tool}" is not a tool of this namespace`,
          hint: `One of: ${[...tools.keys()].join(", ")}.`,
        });
      } else if (!faultFits(step.mode, sideEffect)) {
        problems.push({
          field: at("mode"),
          reason: `"${step.mode}" cannot apply to ${step.tool}, a ${sideEffect} tool`,
          hint: fitHint(step.mode),
        });
      }
    }
    if (step.hang_ms !== undefined && !takesHang(step.mode)) {
      problems.push({
        field: at("hang_ms"),
        reason: `"${step.mode}" does not wait`,
        hint: "hang_ms applies to hang and slow_success only.",
      });
    }
    if (step.retry_after_s !== undefined && !takesRetryAfter(step.mode)) {
      problems.push({
        field: at("retry_after_s"),
        reason: `"${step.mode}" sends no Retry-After`,
        hint: "retry_after_s applies to rate_limited and transient_forever only.",
      });
    }
  });
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    steps: steps.map((step) => ({
      ...toFaultPlan(step.mode, step.hang_ms, step.retry_after_s),
      tool: step.tool ?? null,
      path_prefix: step.path_prefix ?? null,
      times: step.times ?? defaultTimes(step.mode),
    })),
  };
}

function fitHint(mode: FaultMode): string {
  return faultFits(mode, "read")
    ? "stale, injection and large change what a read says: use them with a read tool."
    : "partial_success and silent_failure change what a write does: use them with a write or destructive tool.";
}

/** The orchestrator's per-call fault headers, as the proxy reads them on `POST /v1/runs/{id}/calls`. */
const FAULT_HEADER = "x-sandbox-fault";
const HANG_HEADER = "x-sandbox-fault-hang-ms";
const RETRY_AFTER_HEADER = "x-sandbox-fault-retry-after";
const FAULT_HEADERS = [FAULT_HEADER, HANG_HEADER, RETRY_AFTER_HEADER] as const;

/** Whether a request carries any of the fault headers, valid or not. */
export function hasFaultHeaders(header: (name: string) => string | undefined): boolean {
  return FAULT_HEADERS.some((name) => header(name) !== undefined);
}

/** The refusal where fault injection is off: the orchestrator learns it is not talking to a sandbox. */
export function faultInjectionOff(field: string): Problem {
  return {
    field,
    reason: "fault injection is not enabled in this environment",
    hint: "Scenarios and X-Sandbox-Fault work only where FAULT_INJECTION is set (the sandbox environment). Remove it.",
  };
}

/**
 * Reads `X-Sandbox-Fault` (+ `-Hang-Ms`, `-Retry-After`): the fault for this call's first upstream
 * request. Numbers only for modes that use them, and never without the mode.
 */
export function faultFromHeaders(
  header: (name: string) => string | undefined,
): { ok: true; fault: FaultPlan | null } | { ok: false; problems: Problem[] } {
  const modeText = header(FAULT_HEADER)?.trim();
  const hangText = header(HANG_HEADER)?.trim();
  const retryText = header(RETRY_AFTER_HEADER)?.trim();
  if (modeText === undefined) {
    if (hangText === undefined && retryText === undefined) return { ok: true, fault: null };
    return {
      ok: false,
      problems: [
        {
          field: "X-Sandbox-Fault",
          reason: "missing: the hang or retry header was sent without it",
          hint: "Send X-Sandbox-Fault: <mode> with X-Sandbox-Fault-Hang-Ms or X-Sandbox-Fault-Retry-After.",
        },
      ],
    };
  }
  const problems: Problem[] = [];
  const mode = FaultModeSchema.safeParse(modeText);
  if (!mode.success) {
    problems.push({
      field: "X-Sandbox-Fault",
      reason: `"${modeText.slice(0, 40)}" is not a fault mode`,
      hint: `One of: ${FaultModeSchema.options.join(", ")}.`,
    });
  }
  const hang = wholeNumber(hangText, MAX_HANG_MS, "X-Sandbox-Fault-Hang-Ms", problems);
  const retryAfter = wholeNumber(retryText, MAX_RETRY_AFTER_S, "X-Sandbox-Fault-Retry-After", problems);
  if (mode.success && hang !== undefined && !takesHang(mode.data)) {
    problems.push({
      field: "X-Sandbox-Fault-Hang-Ms",
      reason: `"${mode.data}" does not wait`,
      hint: "Only hang and slow_success take a hang time.",
    });
  }
  if (mode.success && retryAfter !== undefined && !takesRetryAfter(mode.data)) {
    problems.push({
      field: "X-Sandbox-Fault-Retry-After",
      reason: `"${mode.data}" sends no Retry-After`,
      hint: "Only rate_limited and transient_forever take a Retry-After.",
    });
  }
  if (!mode.success || problems.length > 0) return { ok: false, problems };
  return { ok: true, fault: toFaultPlan(mode.data, hang, retryAfter) };
}

function wholeNumber(
  text: string | undefined,
  max: number,
  field: string,
  problems: Problem[],
): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text) || Number(text) > max) {
    problems.push({ field, reason: "not a whole number in range", hint: `A whole number from 0 to ${max}.` });
    return undefined;
  }
  return Number(text);
}
