import type { ApproverRequirement } from "../../../src/approvals/approvers";
import { APPROVAL_TTL_MS, type ApprovalRecord } from "../../../src/approvals/model";
import type { ToolSpec } from "../../../src/catalog/define-tool";

/**
 * A pending approval of one acme call, as the admission machine opens it: asked at `t0`, undecided,
 * expiring `ttl_ms` later (a day unless given), with nothing from other runs and no approver yet.
 */
export function pendingApproval(input: {
  tool: Pick<ToolSpec, "name" | "side_effect">;
  run_id: string;
  key: string;
  args: Record<string, unknown>;
  digest: string;
  policy: string;
  requirement: ApproverRequirement;
  t0: number;
  reasons?: string[];
  ttl_ms?: number;
}): ApprovalRecord {
  return {
    id: "apr_0123456789abcdef01234567",
    tenant: "acme",
    run_id: input.run_id,
    tool: input.tool.name,
    side_effect: input.tool.side_effect,
    idempotency_key: input.key,
    args: input.args,
    args_digest: input.digest,
    policy_version: input.policy,
    policy_binding: null,
    reasons: input.reasons ?? ["destructive tools need a human approval"],
    state: "pending",
    execution: null,
    requested_call_id: "call_first",
    created_at: new Date(input.t0).toISOString(),
    expires_at: new Date(input.t0 + (input.ttl_ms ?? APPROVAL_TTL_MS)).toISOString(),
    sla_due_at: null,
    overdue: false,
    escalated_at: null,
    decided_at: null,
    decided_by: null,
    decided_by_name: null,
    decision_reason: null,
    result: null,
    earlier_effects: [],
    limit: null,
    approver_roles: input.requirement.roles,
    approvals_required: input.requirement.approvals,
    approvers: [],
    user: null,
    edit: null,
  };
}
