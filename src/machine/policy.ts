import { type ApproverRequirement, approverRequirement } from "../approvals/approvers";
import type { PolicyContext, ToolSpec } from "../catalog/define-tool";
import type { Problem } from "../wire/envelope";

/** Whether a human must approve this call before it runs, and the policies' reasons. */
export interface ApprovalNeed {
  required: boolean;
  reasons: string[];
  /** Who may approve it, should it wait for a human; absent: any one operator of the tenant. */
  approvers?: ApproverRequirement;
}

export type PolicyResult = { ok: true; approval: ApprovalNeed } | { ok: false; problems: Problem[] };

/**
 * Stage "policy": the tool's business rules, run on arguments the schema already accepted.
 * Every rule runs, so the model learns about all refused fields at once. Destructive calls need an
 * approval by default; a rule may waive that, and any rule may demand one, which wins.
 */
export function checkPolicy(tool: ToolSpec, args: Record<string, unknown>, ctx: PolicyContext): PolicyResult {
  const problems: Problem[] = [];
  const demands: string[] = [];
  const waivers: string[] = [];
  for (const rule of tool.policy) {
    const decision = rule(args, ctx);
    if (!decision.allow) {
      problems.push({ field: decision.field, reason: decision.reason, hint: decision.hint });
    } else if (decision.approval) {
      (decision.approval.required ? demands : waivers).push(decision.approval.reason);
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  const approvers = approverRequirement(tool, args, ctx.tenant);
  if (demands.length > 0) return { ok: true, approval: { required: true, reasons: demands, approvers } };
  if (tool.side_effect === "destructive" && waivers.length === 0) {
    return {
      ok: true,
      approval: { required: true, reasons: ["destructive tools need a human approval"], approvers },
    };
  }
  return { ok: true, approval: { required: false, reasons: waivers, approvers } };
}
