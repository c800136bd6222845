import type { CallRecord, ScenarioStepBody } from "../agents/client";
import { effectiveCall } from "./call-metrics";
import type { AdminRequest } from "./source-types";

/**
 * Whether every fault a case planted was served, from the sandbox's own request log: a case whose
 * fault never reached its upstream tested nothing, whatever the agent did. Pure, so the rule is
 * unit-tested.
 */

/** One scenario step, and how many of the run's upstream requests suffered it. */
export interface FaultServed {
  mode: string;
  /** The tool it targets, `path_prefix …`, or `any request`. */
  target: string;
  /** The requests it was planted for: its `times`, or 1 when left to the default (a step fires at least once). */
  wanted: number;
  served: number;
  /** Whether the agent called the targeted tool at all: a fault nobody asked for cannot fire. */
  called: boolean;
}

const targetOf = (step: ScenarioStepBody) =>
  step.tool ?? (step.path_prefix !== undefined ? `path_prefix ${step.path_prefix}` : "any request");

function matches(step: ScenarioStepBody, request: AdminRequest): boolean {
  if (request.fault !== step.mode) return false;
  if (step.tool !== undefined) return request.tool === step.tool;
  if (step.path_prefix !== undefined) return request.path.startsWith(step.path_prefix);
  return true;
}

/**
 * Each step, in order, takes the requests that suffered its mode on its target, up to its `times`;
 * a request counts for one step only (two steps alike need two requests). Requests are counted once
 * each, whatever phase the log holds them in.
 */
export function faultsServed(
  scenario: readonly ScenarioStepBody[],
  requests: readonly AdminRequest[],
  calls: readonly CallRecord[],
): FaultServed[] {
  const pool = [...new Map(requests.map((request) => [request.seq, request])).values()].filter(
    (request) => request.fault !== null,
  );
  const taken = new Set<number>();
  const calledTools = new Set(calls.map((call) => effectiveCall(call.tool, call.args).tool));
  return scenario.map((step) => {
    const wanted = step.times ?? 1;
    const mine = pool.filter((request) => !taken.has(request.seq) && matches(step, request)).slice(0, wanted);
    for (const request of mine) taken.add(request.seq);
    return {
      mode: step.mode,
      target: targetOf(step),
      wanted,
      served: mine.length,
      called: step.tool === undefined ? calls.length > 0 : calledTools.has(step.tool),
    };
  });
}

/** The steps that fell short, one line each: what was planted, where, and how many times it fired. */
export function unservedFaults(served: readonly FaultServed[]): string[] {
  return served
    .filter((fault) => fault.served < fault.wanted)
    .map(
      (fault) =>
        `planted fault ${fault.mode} on ${fault.target} was served ${fault.served} of ${fault.wanted} time(s)` +
        (fault.called
          ? ": the agent called it, but its request never reached the upstream as planted (a defect of the case)"
          : ": the agent never called it"),
    );
}

/** Faults that did not fire although the agent made the call they target: the evaluation's own defect. */
export function fixtureDefects(served: readonly FaultServed[]): number {
  return served.filter((fault) => fault.served < fault.wanted && fault.called).length;
}
