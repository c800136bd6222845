import * as z from "zod";
import { CapLimitSchema, EarlierEffectSchema } from "./effects";
import { ApprovalExecutionSchema, ApprovalStateSchema, envelopeSchema } from "./envelope";
import { approvalUserSchema } from "./run-user";
import { SideEffectSchema } from "./side-effect";

/** One operator's approval of a call that needs more than one, in the order they came. */
export const ApproverSchema = z.strictObject({
  operator: z.string().describe('The approving operator\'s id ("operator:<key fingerprint>").'),
  name: z.string().nullable().describe("Their display name when they approved, or null."),
  at: z.iso.datetime(),
});

/**
 * An operator's change of a call's arguments before approving it. The approval then binds the
 * edited arguments (`args`, `args_digest`, `idempotency_key`); the call as asked never executes, and
 * a resend of it is answered with the edited call.
 */
export const ApprovalEditSchema = z.strictObject({
  asked_args: z.record(z.string(), z.unknown()).describe("The arguments as the agent asked for them."),
  asked_key: z
    .string()
    .describe("The idempotency key of the call as asked: a resend of it is answered with the edited call."),
  asked_limit: CapLimitSchema.nullable().describe(
    "The value cap the call as asked would have exceeded, as its approval showed it, or null. An edit may go over a cap only when the call as asked did; later edits keep this from the first.",
  ),
  fields: z.array(z.string()).describe("The top-level arguments the edit changed, sorted."),
  by: z.string().describe('The editing operator\'s id ("operator:<key fingerprint>").'),
  by_name: z.string().nullable().describe("Their display name as configured with their key, or null."),
  at: z.iso.datetime(),
});
export type ApprovalEdit = z.infer<typeof ApprovalEditSchema>;

/**
 * What an approval is bound to beside its call (docs/own-api.md, "Tool versions"): its tool's
 * version with a digest per part of the tool's contract, and a digest of each of the tenant's rules
 * that apply to that tool. A change to either invalidates the approval, naming what changed; any
 * other change (another tool, namespace or tenant, an unrelated setting) leaves it.
 */
export const PolicyBindingSchema = z.strictObject({
  tool: z.strictObject({
    version: z.string().describe("The tool's version when the call asked (tv_…)."),
    parts: z
      .record(z.string(), z.string())
      .describe("A digest of each part of its contract: input, policies, …"),
  }),
  tenant: z
    .record(z.string(), z.string())
    .describe(
      "A digest of each of the tenant's rules for the tool, by name: max_refund_cents, approvers.support.issue_refund, …",
    ),
});
export type PolicyBinding = z.infer<typeof PolicyBindingSchema>;

/**
 * One human decision about one exact call: bound to the run, the tool, the idempotency key (and so
 * the canonical arguments), the digest of those arguments and the policy version it was asked under:
 * the version of its tool and of the tenant's rules for that tool (`policy_binding`).
 */
export const ApprovalRecordSchema = z.strictObject({
  id: z.string(),
  tenant: z.string(),
  run_id: z.string(),
  tool: z.string(),
  side_effect: SideEffectSchema,
  idempotency_key: z.string(),
  args: z.record(z.string(), z.unknown()),
  args_digest: z.string(),
  policy_version: z.string(),
  policy_binding: PolicyBindingSchema.nullable().describe(
    "What policy_version is made of: the tool's version and the tenant's rules for the tool. Null for an approval asked before this was recorded, which policy_version alone judges.",
  ),
  reasons: z.array(z.string()),
  state: ApprovalStateSchema,
  execution: ApprovalExecutionSchema.nullable().describe(
    "What the call did: null while pending, and while an approved call is on its way; then `executed` (it acted), `refused` (the upstream refused it, nothing done), `not_sent` (it never left: rejected, expired, or refused by the proxy before sending, as a remote tool that drifted from its pin) or `in_doubt` (sent, whether it acted is unknown; the approval stays `approved` until a resend settles it). `state` is `executed` once the call's outcome is known, whatever it was: read this for what happened.",
  ),
  requested_call_id: z.string(),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
  sla_due_at: z.iso
    .datetime()
    .nullable()
    .describe(
      "When a decision is due (the tool's approval SLA, else the tenant's approval_sla_s); null when none applies or the approval expires first.",
    ),
  overdue: z
    .boolean()
    .describe(
      "True while the approval is pending past sla_due_at: it still can be decided until expires_at.",
    ),
  escalated_at: z.iso
    .datetime()
    .nullable()
    .describe(
      "When the proxy announced the approval overdue (approval.overdue, to the tenant's escalation_role); null until then. Announced once.",
    ),
  decided_at: z.iso.datetime().nullable(),
  decided_by: z
    .string()
    .nullable()
    .describe('The operator id that decided ("operator:<key fingerprint>"), or null.'),
  decided_by_name: z
    .string()
    .nullable()
    .describe(
      "The deciding operator's display name as configured with their key when they decided, or null.",
    ),
  decision_reason: z.string().nullable(),
  result: envelopeSchema().nullable().describe("The envelope of the execution, once the approved call ran."),
  earlier_effects: z
    .array(EarlierEffectSchema)
    .describe(
      "Effects other runs of the tenant made, or were about to make, on the same business thing within the tool's window when this call asked; approving needs confirm_duplicate while this is not empty.",
    ),
  limit: CapLimitSchema.nullable().describe(
    "The value cap this call would exceed, as it stood when the call asked; approving it is recorded as an operator override.",
  ),
  approver_roles: z
    .array(z.string())
    .describe(
      "The roles whose decision counts (OPERATOR_KEYS); empty: any operator of the tenant. A decision from an operator holding none of them is refused with 403.",
    ),
  approvals_required: z
    .number()
    .int()
    .min(1)
    .max(2)
    .describe(
      "How many distinct operators must approve before the call executes: 2 above the tenant's two_person_above. One rejection ends it either way.",
    ),
  approvers: z
    .array(ApproverSchema)
    .describe(
      'When approvals_required is above 1, each approval recorded so far, in order ("1 of 2" while pending: approvers.length of approvals_required); empty otherwise (decided_by names the one approver).',
    ),
  user: approvalUserSchema()
    .nullable()
    .describe(
      "Whom the call acts for: the user the run's opener asserted (docs/users.md); null when the run acts for no user.",
    ),
  edit: ApprovalEditSchema.nullable().describe(
    "How an operator changed the arguments before approving (args then holds the edited ones); null when they are as asked.",
  ),
});
export type ApprovalRecord = z.infer<typeof ApprovalRecordSchema>;

/**
 * What the tenant-wide directory keeps of an approval, for listing without waking every run: with
 * who may decide it and, for one that needs two operators, who approved so far ("1 of 2").
 */
export const ApprovalSummarySchema = ApprovalRecordSchema.pick({
  id: true,
  run_id: true,
  tool: true,
  side_effect: true,
  state: true,
  execution: true,
  args: true,
  reasons: true,
  args_digest: true,
  created_at: true,
  expires_at: true,
  sla_due_at: true,
  overdue: true,
  escalated_at: true,
  decided_at: true,
  decided_by: true,
  decided_by_name: true,
  approver_roles: true,
  approvals_required: true,
  approvers: true,
  user: true,
});
export type ApprovalSummary = z.infer<typeof ApprovalSummarySchema>;

/**
 * Another run's approval of the same destructive call (same tool and canonical arguments) that is
 * pending or went ahead within the retention window: approving this one too would do it again.
 */
export const ApprovalDuplicateSchema = z.strictObject({
  approval_id: z.string(),
  run_id: z.string(),
  state: ApprovalStateSchema,
  created_at: z.iso.datetime(),
  decided_by: z.string().nullable(),
  decided_by_name: z.string().nullable(),
});
export type ApprovalDuplicate = z.infer<typeof ApprovalDuplicateSchema>;

/** A row of `GET /v1/approvals`: the summary, and how many duplicates it has in other runs. */
export const ApprovalListItemSchema = ApprovalSummarySchema.extend({
  duplicates: z
    .number()
    .int()
    .nonnegative()
    .describe(
      "How many approvals of the same destructive call other runs of the tenant have pending or gone ahead (see the approval's duplicates); approving needs confirm_duplicate while this is not 0.",
    ),
});
export type ApprovalListItem = z.infer<typeof ApprovalListItemSchema>;
