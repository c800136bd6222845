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

/** A call the earlier stages refused: it is charged and answered, never sent. */
export interface RefusedCall {
  refusal: FailureSpec;
  toolName: string | null;
  /** The tool, when the call got as far as finding it. */
  tool: ToolSpec | null;
  /** What the agent sent, for the trace and repeat detection (null when it broke the input limits). */
  rawArgs: unknown;
  args: null;
  approval: ApprovalNeed;
}

/** A call that passed the schema and the policy: the machine may admit it. */
export interface ValidCall {
  refusal: null;
  toolName: string;
  tool: ToolSpec;
  rawArgs: unknown;
  /** The parsed arguments: the digest, the key and the request are built from these. */
  args: Record<string, unknown>;
  approval: ApprovalNeed;
}

export type PreparedCall = RefusedCall | ValidCall;

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
  const refused = (refusal: FailureSpec, tool: ToolSpec | null = null): RefusedCall => ({
    refusal,
    toolName: request.tool,
    tool,
    rawArgs: request.args,
    args: null,
    approval: { required: false, reasons: [] },
  });
  // The edge refuses these already; the ledger defends itself too, because a value JSON cannot
  // represent canonically (1e400 parses as Infinity) must never reach the digest or the trace.
  const structural = request.ok ? structuralProblems(request.args) : [];
  if (structural.length > 0) {
    return {
      ...refused({
        code: "validation_error",
        message: "The arguments break the proxy's input limits. Fix the fields listed in problems.",
        problems: structural,
      }),
      rawArgs: null,
    };
  }
  if (!request.ok) {
    return refused({
      code: "validation_error",
      message: "The request body is not a valid tool call. Fix the fields listed in problems.",
      problems: request.problems,
    });
  }

  const resolved = resolveTool(catalog, namespace, request.tool);
  if (!resolved.ok) return refused(resolved.refusal);
  const { tool } = resolved;

  const validation = validateArguments(tool.input, request.args);
  if (!validation.ok) {
    return refused(
      {
        code: "validation_error",
        message: `The arguments for ${tool.name} are invalid: ${validation.problems
          .map((problem) => `${problem.field} (${problem.reason})`)
          .join("; ")}. Fix them and call again.`,
        problems: validation.problems,
      },
      tool,
    );
  }

  const decision = checkPolicy(tool, validation.args, policy);
  if (!decision.ok) {
    return refused(
      {
        code: "permission_error",
        message: `Policy does not allow this ${tool.name} call: ${decision.problems
          .map((problem) => problem.reason)
          .join("; ")}.`,
        problems: decision.problems,
        side_effect_confirmed: false,
        recommended_next_action: "escalate_to_human",
      },
      tool,
    );
  }

  return {
    refusal: null,
    toolName: request.tool,
    tool,
    rawArgs: request.args,
    args: validation.args,
    approval: decision.approval,
  };
}
