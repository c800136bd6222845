import { type ApproverRequirement, approverRequirement, editedRequirement } from "../approvals/approvers";
import type { ApprovalRecord } from "../approvals/model";
import type { Catalog } from "../catalog/catalog";
import type { ToolSpec } from "../catalog/define-tool";
import type { TenantConfig } from "../config/tenants";
import { canonicalJson, differingFields } from "../core/canonical-json";
import { callDigest, deriveIdempotencyKey } from "../core/idempotency-key";
import { applyMasks } from "../shaping/mask";
import type { FailureSpec } from "../wire/envelope";
import type { AgentCall } from "./admit";
import { prepareCall } from "./prepare";
import { buildRequest } from "./request";
import type { RunMeta, StoredRequest } from "./run-state";

/**
 * Approve with edit, before the machine decides: the operator's arguments are checked like an
 * agent's call of the same tool (structure, then policy) and become a call of their own, with its
 * digest, its idempotency key (run + tool + canonical edited arguments, never from the operator),
 * its upstream request and who must approve it. Nothing is stored or sent here.
 */
export interface EditPlan {
  /** The approval's `args_digest` the edit was made on: a decision on a since-changed approval is refused. */
  based_on: string;
  /** The edited arguments as validated: the digest, key and request are built from these. */
  args: Record<string, unknown>;
  digest: string;
  key: string;
  request: StoredRequest;
  /** Never below the call as asked: see `editedRequirement`. */
  requirement: ApproverRequirement;
  /** Why the edited call needs a human by the tool's policy (the edit's approval keeps them). */
  policy_reasons: string[];
  /** The top-level arguments whose values differ from the call as asked, sorted. */
  fields: string[];
  /** The edited arguments as the trace and the tenant's effects keep them (sensitive fields masked). */
  trace_args: unknown;
}

export type PreparedEdit =
  | { kind: "edit"; plan: EditPlan }
  /** The arguments are the approval's own: a plain approval. */
  | { kind: "unchanged" }
  | { kind: "refused"; refusal: FailureSpec };

export async function prepareEdit(
  catalog: Catalog,
  input: {
    run: RunMeta;
    tenant: TenantConfig;
    tool: ToolSpec;
    approval: ApprovalRecord;
    args: unknown;
  },
): Promise<PreparedEdit> {
  const { run, tenant, tool, approval } = input;
  const prepared = prepareCall(
    catalog,
    { tools: [tool], granted: [], discovery_left: 0 },
    { ok: true, tool: tool.name, args: input.args },
    // The edited call is the run's user's as the asked one was: their claims bound it alike.
    { tenantId: run.tenant, tenant, user: run.user ?? null },
  );
  if (prepared.refusal !== null) {
    return {
      kind: "refused",
      refusal: {
        ...prepared.refusal,
        message: `The edited arguments cannot be approved: ${prepared.refusal.message}`,
      },
    };
  }
  const args = JSON.parse(canonicalJson(prepared.args)) as Record<string, unknown>;
  if (canonicalJson(args) === canonicalJson(approval.args)) return { kind: "unchanged" };
  const asked = approval.edit?.asked_args ?? approval.args;
  const key = await deriveIdempotencyKey({ tenant: run.tenant, runId: run.run_id, tool: tool.name, args });
  return {
    kind: "edit",
    plan: {
      based_on: approval.args_digest,
      args,
      digest: await callDigest(tool.name, args),
      key,
      request: buildRequest(tool, args, { key, callId: approval.requested_call_id }),
      requirement: editedRequirement(
        tool,
        { args: asked, requirement: askedRequirement(input) },
        args,
        tenant,
      ),
      policy_reasons: prepared.approval.reasons,
      fields: differingFields(asked, args),
      trace_args: applyMasks(args, tool.sensitive_args),
    },
  };
}

/**
 * Who the call as asked needed. An approval holds it as it opened until an edit replaces it with the
 * edit's; after that it is worked out again from the asked arguments, under the same tenant
 * configuration (a changed one changes the policy version, and the approval can no longer be
 * granted). So a second edit is held to the asked call and itself, never to an edit it replaces: an
 * amount edited up and back down needs what the asked amount needed.
 */
function askedRequirement(input: {
  tenant: TenantConfig;
  tool: ToolSpec;
  approval: ApprovalRecord;
}): ApproverRequirement {
  const { tenant, tool, approval } = input;
  if (approval.edit) return approverRequirement(tool, approval.edit.asked_args, tenant);
  return { roles: approval.approver_roles, approvals: approval.approvals_required >= 2 ? 2 : 1 };
}

/**
 * An agent's call of arguments an operator edited before approving: it is the edited call from
 * here on (its key, arguments and stored request), so it waits for, joins or replays that call and
 * never sends the arguments as asked.
 */
export function asEditedCall(
  call: AgentCall,
  approval: Pick<ApprovalRecord, "idempotency_key" | "args">,
  request: StoredRequest | null,
): AgentCall {
  const { prepared } = call;
  if (prepared.refusal !== null) return call;
  const key = approval.idempotency_key;
  return {
    ...call,
    key,
    // The edited key's record holds its request; were it missing, the request is built from the
    // edited arguments, never taken from the call as asked.
    request: request ?? buildRequest(prepared.tool, approval.args, { key, callId: call.call_id }),
    prepared: { ...prepared, args: approval.args },
  };
}
