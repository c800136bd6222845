import { Webhook } from "standardwebhooks";
import type { Env } from "../env";
import type { ApprovalState } from "../wire/envelope";
import type { ApprovalSummary } from "./model";

type Send = (request: Request) => Promise<Response>;

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

/** A service binding gets the sandbox's hook path; a URL var is used exactly as given (chat webhooks have their own paths). */
function hookTarget(env: object): { url: string; send: Send } | null {
  const value = (env as Record<string, unknown>).APPROVAL_WEBHOOK;
  if (typeof value === "string" && /^https?:\/\//.test(value))
    return { url: value, send: (request) => fetch(request) };
  if (typeof value === "object" && value !== null && typeof (value as Fetcher).fetch === "function") {
    const fetcher = value as Fetcher;
    return { url: "https://upstream.internal/_hooks/approvals", send: (request) => fetcher.fetch(request) };
  }
  return null;
}

let cachedSigner: { secret: string; webhook: Webhook | null } | null = null;
let warned = false;

/** Says once per isolate why no webhook goes out: a hook that is never sent must not be silent. */
function warnOnce(message: string): null {
  if (!warned) {
    warned = true;
    console.warn(message);
  }
  return null;
}

/** The signer for `APPROVAL_WEBHOOK_SECRET` (`whsec_` + base64), or null when it is absent or malformed. */
function signerFor(env: Pick<Env, "APPROVAL_WEBHOOK_SECRET">): Webhook | null {
  const secret = env.APPROVAL_WEBHOOK_SECRET;
  if (secret === undefined || secret.trim() === "") {
    return warnOnce(
      "approval webhook not sent: APPROVAL_WEBHOOK is set but APPROVAL_WEBHOOK_SECRET is not, and approval webhooks are never sent unsigned",
    );
  }
  if (cachedSigner?.secret !== secret) {
    let webhook: Webhook | null = null;
    try {
      webhook = new Webhook(secret);
    } catch {
      webhook = null;
    }
    cachedSigner = { secret, webhook };
  }
  return (
    cachedSigner.webhook ??
    warnOnce("approval webhook not sent: APPROVAL_WEBHOOK_SECRET is not a whsec_ secret (whsec_ + base64)")
  );
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
  const id = webhookIdOf(approval);
  try {
    const status = await postEvent(env, id, {
      type: APPROVAL_EVENTS[approval.state],
      tenant,
      approval,
      console_path: consolePathOf(approval),
    });
    if (status !== null && (status < 200 || status > 299))
      console.warn(`approval webhook ${id} answered ${status}`);
  } catch (error) {
    console.warn(`approval webhook ${id} failed`, error);
  }
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
  const status = await postEvent(env, id, {
    type: OVERDUE_EVENT,
    tenant,
    approval,
    console_path: consolePathOf(approval),
    escalation_role: escalationRole,
  });
  if (status !== null && (status < 200 || status > 299)) {
    throw new Error(`approval webhook ${id} answered ${status}`);
  }
}

function consolePathOf(approval: Pick<ApprovalSummary, "id">): string {
  return `/console/approvals/${approval.id}`;
}

/**
 * Signs and posts one event; the receiver's status, or null when no hook (or no usable secret) is
 * configured and nothing was sent. A network failure or the five-second timeout throws.
 */
async function postEvent(
  env: Env,
  id: string,
  event: Omit<ApprovalEvent, "timestamp">,
): Promise<number | null> {
  const hook = hookTarget(env);
  if (!hook) return null;
  const signer = signerFor(env);
  if (!signer) return null;
  const at = new Date();
  const body = JSON.stringify({ ...event, timestamp: at.toISOString() } satisfies ApprovalEvent);
  const response = await hook.send(
    new Request(hook.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": signer.sign(id, at, body),
      },
      body,
      signal: AbortSignal.timeout(5_000),
    }),
  );
  await response.body?.cancel();
  return response.status;
}
