import type { Env } from "../env";
import type { ApprovalState } from "../wire/envelope";
import type { ApprovalSummary } from "./model";
import { postSignedEvent } from "./signed-webhook";

/** The event each approval state announces; `decided` covers both answers an operator can give. */
export const APPROVAL_EVENTS = {
  pending: "approval.created",
  approved: "approval.decided",
  rejected: "approval.decided",
  executed: "approval.executed",
  expired: "approval.expired",
} as const satisfies Record<ApprovalState, string>;

export type ApprovalEventType = (typeof APPROVAL_EVENTS)[ApprovalState];

/** What the webhook posts, signed byte for byte. */
export interface ApprovalEvent {
  type: ApprovalEventType;
  /** When the event was sent (ISO 8601); the signed `webhook-timestamp` header says the same in seconds. */
  timestamp: string;
  tenant: string;
  approval: ApprovalSummary;
  console_path: string;
}

/**
 * The `webhook-id` of an approval's event: one per state an approval reaches, and each state is
 * reached once, so a receiver that has seen the id has seen the event (Standard Webhooks' dedup key).
 */
export function webhookIdOf(approval: Pick<ApprovalSummary, "id" | "state">): string {
  return `evt_${approval.id}_${approval.state}`;
}

/**
 * Announces an approval's new state through the optional `APPROVAL_WEBHOOK` binding (a service
 * binding or a URL), so a team can page someone or post to chat: `approval.created`,
 * `approval.decided` (approved or rejected), `approval.executed`, `approval.expired`. Signed per
 * Standard Webhooks with `APPROVAL_WEBHOOK_SECRET` (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`); without the secret nothing is sent. Best effort: a failing hook is logged
 * and never blocks or fails the agent's call or the operator's decision.
 */
export async function notifyApproval(env: Env, tenant: string, approval: ApprovalSummary): Promise<void> {
  const at = new Date();
  const event: ApprovalEvent = {
    type: APPROVAL_EVENTS[approval.state],
    timestamp: at.toISOString(),
    tenant,
    approval,
    console_path: `/console/approvals/${approval.id}`,
  };
  await postSignedEvent(env, { id: webhookIdOf(approval), at, body: JSON.stringify(event) });
}
