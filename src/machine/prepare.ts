import type { Catalog } from "../catalog/catalog";
import type { PolicyContext, ToolSpec } from "../catalog/define-tool";
import { FIND_TOOLS, findGranted, USE_TOOL } from "../catalog/subset";
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
interface RefusedCall {
  refusal: FailureSpec;
  toolName: string | null;
  /** The tool, when the call got as far as finding it. */
  tool: ToolSpec | null;
  /** What the agent sent, for the trace and repeat detection (null when it broke the input limits). */
  rawArgs: unknown;
  args: null;
  approval: ApprovalNeed;
  via?: typeof USE_TOOL | null;
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
  /** "use_tool" when the call named its tool through it: `toolName` and `tool` are the real tool's. */
  via?: typeof USE_TOOL | null;
}

/**
 * What a call may reach: the run's own tools (called directly), the tools the tenant grants it
 * (through `use_tool`), and how many `find_tools`/`use_tool` calls it has left. A namespace stands
 * for that namespace's tools with no discovery, as runs opened without a subset have.
 */
export interface CallScope {
  tools: readonly ToolSpec[];
  granted: readonly ToolSpec[];
  discovery_left: number;
}

export type PreparedCall = RefusedCall | ValidCall;

/**
 * Stages "resolve", "validate" and "policy" together: finds the tool in the run's namespace, checks the
 * arguments' structure, then the business rules. Pure: nothing is stored or sent here.
 */
export function prepareCall(
  catalog: Catalog,
  scope: string | CallScope,
  request: CallRequest,
  policy: PolicyContext,
): PreparedCall {
  let via: typeof USE_TOOL | null = null;
  const refused = (refusal: FailureSpec, tool: ToolSpec | null = null): RefusedCall => ({
    refusal,
    toolName: tool?.name ?? request.tool,
    tool,
    rawArgs: request.args,
    args: null,
    approval: { required: false, reasons: [] },
    via,
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

  const resolved = resolveTool(catalog, typeof scope === "string" ? scope : scope.tools, request.tool);
  if (!resolved.ok) return refused(resolved.refusal);
  let { tool } = resolved;
  let args = request.args;
  if ((tool.name === FIND_TOOLS || tool.name === USE_TOOL) && typeof scope !== "string") {
    if (tool.name === USE_TOOL) via = USE_TOOL;
    if (scope.discovery_left <= 0) {
      return refused({
        code: "budget_exhausted",
        message: `This run used all its find_tools and use_tool calls. Work with the tools you have, or stop and report.`,
        recommended_next_action: "stop",
        side_effect_confirmed: false,
      });
    }
    if (tool.name === USE_TOOL) {
      const wrapped = validateArguments(tool.input, request.args);
      if (!wrapped.ok) {
        return refused({
          code: "validation_error",
          message: `The arguments for use_tool are invalid: ${wrapped.problems
            .map((problem) => `${problem.field} (${problem.reason})`)
            .join("; ")}. Send {name, arguments}.`,
          problems: wrapped.problems,
        });
      }
      const found = findGranted(scope.granted, String(wrapped.args.name));
      if (!found.ok) {
        return refused({
          code: "not_found",
          message: `use_tool cannot call ${found.reason}. Find a tool with find_tools first.`,
          problems: [{ field: "name", reason: found.reason, hint: found.hint }],
          recommended_next_action: "use_other_tool",
        });
      }
      tool = found.tool;
      args = wrapped.args.arguments;
    }
  }

  const validation = validateArguments(tool.input, args);
  if (!validation.ok) {
    return refused(
      {
        code: "validation_error",
        message: `The arguments for ${tool.name} are invalid: ${validation.problems
          .map((problem) => `${problem.field} (${problem.reason})`)
          .join("; ")}. Fix them and call again.`,
        problems:
          via === null
            ? validation.problems
            : validation.problems.map((problem) => ({ ...problem, field: `arguments.${problem.field}` })),
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
    toolName: tool.name,
    tool,
    rawArgs: args,
    args: validation.args,
    approval: decision.approval,
    via,
  };
}
