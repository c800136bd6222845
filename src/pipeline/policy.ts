import type { PolicyContext, ToolSpec } from "../catalog/define-tool";
import type { Problem } from "../envelope";

export type PolicyResult = { ok: true } | { ok: false; problems: Problem[] };

/**
 * Stage "policy": the tool's business rules, run on arguments the schema already accepted.
 * Every rule runs, so the model learns about all refused fields at once.
 */
export function checkPolicy(tool: ToolSpec, args: Record<string, unknown>, ctx: PolicyContext): PolicyResult {
  const problems: Problem[] = [];
  for (const rule of tool.policy) {
    const decision = rule(args, ctx);
    if (!decision.allow)
      problems.push({ field: decision.field, reason: decision.reason, hint: decision.hint });
  }
  return problems.length === 0 ? { ok: true } : { ok: false, problems };
}
