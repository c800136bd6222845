import type { PolicyContext, PolicyDecision } from "../catalog/define-tool";

/**
 * Business rules shared by the demo tools. They run after the schema accepted the arguments, and
 * refuse with a reason the model can act on (which field, what is wrong, what is allowed).
 */

/** The id in `field` must belong to the calling tenant (per its `owns` patterns). */
export function ownedBy(field: string) {
  return (args: Record<string, unknown>, ctx: PolicyContext): PolicyDecision => {
    const value = args[field];
    const pattern = ctx.tenant.owns[field];
    if (typeof value !== "string" || pattern === undefined) return { allow: true };
    if (new RegExp(pattern).test(value)) return { allow: true };
    return {
      allow: false,
      field,
      reason: `${value} does not belong to this tenant`,
      hint: `Use an id from this tenant's own records; ids from other accounts are never reachable.`,
    };
  };
}

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
