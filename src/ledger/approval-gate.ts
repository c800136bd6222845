import {
  APPROVAL_POLL_MS,
  APPROVAL_TTL_MS,
  type ApprovalRecord,
  type ApprovalSummary,
  approvalBlock,
  newApprovalId,
  summarize,
} from "../approvals/model";
import type { ToolSpec } from "../catalog/define-tool";
import type { TenantConfig } from "../config/tenants";
import type { ApprovalBlock, FailureSpec } from "../envelope";
import type { ApprovalStore } from "./approval-store";
import { canonicalJson } from "./canonical-json";

export interface GateRequest {
  callId: string;
  key: string;
  tool: ToolSpec;
  args: Record<string, unknown> | null;
  reasons: readonly string[];
  digest: string;
  policyVersion: string;
  now: number;
}

export type GateRefusal = { spec: FailureSpec; approval: ApprovalBlock | null };

export const APPROVAL_EXPIRED: FailureSpec = {
  code: "approval_expired",
  message:
    "Nobody approved this call in time, or the policy changed; it will not run. Ask a human how to proceed.",
};

/**
 * Stage "approval", inside the ledger's admission transaction: the call waits for a human unless an
 * operator already approved it. Opens the approval on first sight (identical calls find the same
 * one), and returns the refusal to answer with, or null when an approval lets the call through.
 * Approvals it opens or expires are added to `published`, for the tenant's directory.
 */
export function passApprovalGate(
  approvals: ApprovalStore,
  tenant: TenantConfig,
  request: GateRequest,
  published: ApprovalSummary[],
): GateRefusal | null {
  const { key, tool, now } = request;
  let approval = approvals.byKey(key);
  if (!approval) {
    if (approvals.countOpen(now) >= tenant.max_open_approvals) {
      return {
        spec: {
          code: "budget_exhausted",
          message: `This run already has ${tenant.max_open_approvals} approvals waiting; wait for a decision before asking for more.`,
          details: { limit: "max_open_approvals" },
        },
        approval: null,
      };
    }
    const id = newApprovalId();
    approvals.insert({
      id,
      idempotency_key: key,
      tool: tool.name,
      side_effect: tool.side_effect,
      args: canonicalJson(request.args),
      args_digest: request.digest,
      policy_version: request.policyVersion,
      reasons: JSON.stringify(request.reasons),
      requested_call_id: request.callId,
      created_at: now,
      expires_at: now + APPROVAL_TTL_MS,
    });
    approval = approvals.byId(id) as ApprovalRecord;
    published.push(summarize(approval));
  }
  const block = approvalBlock(approval);
  switch (approval.state) {
    case "pending":
      if (Date.parse(approval.expires_at) <= now) {
        approvals.setState(approval.id, "expired", null);
        published.push({ ...summarize(approval), state: "expired" });
        return { spec: APPROVAL_EXPIRED, approval: { ...block, state: "expired" } };
      }
      return {
        spec: {
          code: "approval_required",
          message: `A human must approve this ${tool.name} call (${approval.reasons.join("; ")}). Wait, then make the identical call again to get its result.`,
          retry_after_ms: APPROVAL_POLL_MS,
          details: { approval_id: approval.id },
        },
        approval: block,
      };
    case "rejected":
      return {
        spec: {
          code: "approval_rejected",
          message: `An operator rejected this call${approval.decision_reason ? `: ${approval.decision_reason}` : "."} Do not retry it.`,
          details: { approval_id: approval.id, reason: approval.decision_reason },
        },
        approval: block,
      };
    case "expired":
      return { spec: APPROVAL_EXPIRED, approval: block };
    case "approved":
    case "executed":
      return null;
  }
}

/** What an operator's decision does to an approval, decided before anything is written. */
export type DecisionPlan =
  /** Nothing changes: no such approval, or the same decision again (two operators at once). */
  | { kind: "unchanged"; found: boolean }
  | { kind: "expire"; why: string }
  | { kind: "refuse"; message: string }
  | { kind: "reject" }
  | { kind: "approve"; tool: ToolSpec };

export interface DecisionContext {
  now: number;
  policyVersion: string;
  runClosed: boolean;
  findTool: (name: string) => ToolSpec | undefined;
  /** Why the run's budget cannot take one more execution of this tool, or null when it can. */
  budgetRefusal: (tool: ToolSpec) => string | null;
}

/**
 * The rules of an operator's decision. Deciding a decided approval the same way again changes
 * nothing; the other way is a conflict. A pending approval past its expiry, or asked under another
 * policy version, can no longer be granted. Approving needs an open run, a tool that still exists
 * and room in the run's budget: the cap counts executions, so it is checked now, not when asked.
 */
export function planDecision(
  approval: ApprovalRecord | null,
  decision: "approve" | "reject",
  ctx: DecisionContext,
): DecisionPlan {
  if (!approval) return { kind: "unchanged", found: false };
  if (approval.state !== "pending") {
    const same = decision === "approve" ? ["approved", "executed"] : ["rejected"];
    return same.includes(approval.state)
      ? { kind: "unchanged", found: true }
      : { kind: "refuse", message: `This approval is already ${approval.state}.` };
  }
  if (approval.policy_version !== ctx.policyVersion) {
    return { kind: "expire", why: "the policy changed since it was requested" };
  }
  if (Date.parse(approval.expires_at) <= ctx.now) return { kind: "expire", why: "it expired" };
  if (decision === "reject") return { kind: "reject" };
  if (ctx.runClosed) return { kind: "refuse", message: "The run has ended; nothing can be executed in it." };
  const tool = ctx.findTool(approval.tool);
  if (!tool) return { kind: "refuse", message: "The tool no longer exists." };
  const budget = ctx.budgetRefusal(tool);
  if (budget) return { kind: "refuse", message: budget };
  return { kind: "approve", tool };
}
