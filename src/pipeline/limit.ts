import type { FailureSpec } from "../envelope";
import { structuralProblems } from "../http/limits";
import type { CallRequest } from "./prepare";

/**
 * Stage "limit" at the edge: the structure of what the caller controls (depth, sizes, key counts).
 * It reaches no object: the run's and the tenant's call rates are the run's ledger's first check
 * (see ratelimit/run-gate.ts). A refused call is no dispatch and spends no budget.
 */
export function limitCall(request: CallRequest): FailureSpec | null {
  // Named from the body's root (`args.query`), as the REST door names every other field.
  const problems = structuralProblems({ args: request.args ?? {} });
  if (problems.length === 0) return null;
  return {
    code: "validation_error",
    message: "The arguments break the proxy's input limits. Fix the fields listed in problems.",
    problems,
    side_effect_confirmed: false,
  };
}
