import type { Env } from "../env";
import type { FailureSpec } from "../envelope";
import { structuralProblems } from "../http/limits";
import { admitCall } from "../ratelimit/admission";
import type { Caller } from "./entry";
import type { CallRequest } from "./prepare";

/**
 * Stage "limit": the run's and the tenant's rate, then the structure of what the caller controls.
 * Neither spends budget nor reaches the ledger: a refused call is no dispatch.
 */
export async function limitCall(env: Env, caller: Caller, request: CallRequest): Promise<FailureSpec | null> {
  const limited = await admitCall(env, caller.tenant, caller.run);
  if (limited) return limited;
  const problems = structuralProblems(request.args ?? {});
  if (problems.length === 0) return null;
  return {
    code: "validation_error",
    message: "The arguments break the proxy's input limits. Fix the fields listed in problems.",
    problems,
    side_effect_confirmed: false,
  };
}
