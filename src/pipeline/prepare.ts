import type { Catalog } from "../catalog/catalog";
import type { PolicyContext, ToolSpec } from "../catalog/define-tool";
import type { FailureSpec, Problem } from "../wire/envelope";
import { structuralProblems } from "./limit";
import { type ApprovalNeed, checkPolicy } from "./policy";
import { resolveTool } from "./resolve";
import { validateArguments } from "./validate";

/** A call as the worker hands it to the ledger: parsed, or already known to be malformed. */
export type CallRequest =
  | { ok: true; tool: string; args: unknown }
  | { ok: false; tool: string | null; args: unknown; problems: Problem[] };

export interface PreparedCall {
  toolName: string | null;
  tool: ToolSpec | null;
  /** What the agent sent, for the trace and repeat detection. */
  rawArgs: unknown;
  /** The parsed arguments, when they passed the schema and the policy. */
  args: Record<string, unknown> | null;
  refusal: FailureSpec | null;
  approval: ApprovalNeed;
}

/**
 * Stages "resolve", "validate" and "policy" together: finds the tool in the run's namespace, checks the
 * arguments' structure, then the business rules. Pure: nothing is stored or sent here.
 */
export function prepareCall(
  catalog: Catalog,
  namespace: string,
  request: CallRequest,
  policy: PolicyContext,
): PreparedCall {
  const base = {
    toolName: request.tool,
    tool: null,
    rawArgs: request.args,
    args: null,
    approval: { required: false, reasons: [] },
  };
  // The edge refuses these already; the ledger defends itself too, because a value JSON cannot
  // represent canonically (1e400 parses as Infinity) must never reach the digest or the trace.
  const structural = request.ok ? structuralProblems(request.args) : [];
  if (structural.length > 0) {
    return {
      ...base,
      rawArgs: null,
      refusal: {
        code: "validation_error",
        message: "The arguments break the proxy's input limits. Fix the fields listed in problems.",
        problems: structural,
      },
    };
  }
  if (!request.ok) {
    return {
      ...base,
      refusal: {
        code: "validation_error",
        message: "The request body is not a valid tool call. Fix the fields listed in problems.",
        problems: request.problems,
      },
    };
  }

  const resolved = resolveTool(catalog, namespace, request.tool);
  if (!resolved.ok) return { ...base, refusal: resolved.refusal };
  const { tool } = resolved;

  const validation = validateArguments(tool.input, request.args);
  if (!validation.ok) {
    return {
      ...base,
      tool,
      refusal: {
        code: "validation_error",
        message: `The arguments for ${tool.name} are invalid: ${validation.problems
          .map((problem) => `${problem.field} (${problem.reason})`)
          .join("; ")}. Fix them and call again.`,
        problems: validation.problems,
      },
    };
  }

  const decision = checkPolicy(tool, validation.args, policy);
  if (!decision.ok) {
    return {
      ...base,
      tool,
      refusal: {
        code: "permission_error",
        message: `Policy does not allow this ${tool.name} call: ${decision.problems
          .map((problem) => problem.reason)
          .join("; ")}.`,
        problems: decision.problems,
        side_effect_confirmed: false,
        recommended_next_action: "escalate_to_human",
      },
    };
  }

  return { ...base, tool, args: validation.args, refusal: null, approval: decision.approval };
}
