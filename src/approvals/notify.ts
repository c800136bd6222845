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

/** A pending approval past its SLA, announced once to the tenant's escalation role. */
export const OVERDUE_EVENT = "approval.overdue";

export type ApprovalEventType = (typeof APPROVAL_EVENTS)[ApprovalState] | typeof OVERDUE_EVENT;

/** What the webhook posts, signed byte for byte. */
export interface ApprovalEvent {
  type: ApprovalEventType;
  /** When the event was sent (ISO 8601); the signed `webhook-timestamp` header says the same in seconds. */
  timestamp: string;
  tenant: string;
  approval: ApprovalSummary;
  console_path: string;
  /** `approval.overdue` only: the role to notify (the tenant's `escalation_role`), or null when it names none. */
  escalation_role?: string | null;
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
    console_path: consolePathOf(approval),
  };
  await postSignedEvent(env, { id: webhookIdOf(approval), at, body: JSON.stringify(event) });
}

/** The `webhook-id` of an approval's overdue announcement: one per approval, sent once. */
export function overdueWebhookIdOf(approval: Pick<ApprovalSummary, "id">): string {
  return `evt_${approval.id}_overdue`;
}

/**
 * Announces a pending approval past its SLA (`approval.overdue`), naming the role to notify. Unlike
 * the other events it is delivered from the run's outbox: it throws when the hook fails or answers
 * anything but 2xx, and the ledger's alarm sends it again (the same `webhook-id`), backing off,
 * until it is delivered. Without a hook or a secret there is nothing to deliver.
 */
export async function announceOverdue(
  env: Env,
  tenant: string,
  approval: ApprovalSummary,
  escalationRole: string | null,
): Promise<void> {
  const id = overdueWebhookIdOf(approval);
  const at = new Date();
  const event: ApprovalEvent = {
    type: OVERDUE_EVENT,
    timestamp: at.toISOString(),
    tenant,
    approval,
    console_path: consolePathOf(approval),
    escalation_role: escalationRole,
  };
  if ((await postSignedEvent(env, { id, at, body: JSON.stringify(event) })) === "failed") {
    throw new Error(`approval webhook ${id} was not acknowledged`);
  }
}

function consolePathOf(approval: Pick<ApprovalSummary, "id">): string {
  return `/console/approvals/${approval.id}`;
}
