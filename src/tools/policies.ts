import type { PolicyContext, PolicyDecision } from "../catalog/define-tool";

/**
 * Business rules shared by the demo tools. They run after the schema accepted the arguments, and
 * refuse with a reason the model can act on (which field, what is wrong, what is allowed).
 */

/** A single refund may not exceed the tenant's per-refund limit. */
export function refundWithinLimit(args: { amount_cents: number }, ctx: PolicyContext): PolicyDecision {
  const limit = ctx.tenant.max_refund_cents;
  if (args.amount_cents <= limit) return { allow: true };
  return {
    allow: false,
    field: "amount_cents",
    reason: `${args.amount_cents} is above this tenant's per-refund limit`,
    hint: `At most ${limit} cents per refund; larger refunds need a human: use create_internal_ticket to escalate.`,
  };
}

/** Small refunds may skip the human approval, up to the tenant's auto-approval limit. */
export function refundAutoApproval(args: { amount_cents: number }, ctx: PolicyContext): PolicyDecision {
  const limit = ctx.tenant.auto_approve_refund_cents;
  if (args.amount_cents > limit) return { allow: true };
  return {
    allow: true,
    approval: { required: false, reason: `refunds up to ${limit} cents are auto-approved` },
  };
}

/** Urgent tickets page the on-call team, so a human confirms them first. */
export function urgentTicketNeedsApproval(args: { priority: string }): PolicyDecision {
  if (args.priority !== "urgent") return { allow: true };
  return { allow: true, approval: { required: true, reason: "urgent tickets page the on-call team" } };
}
