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
  const hook = hookTarget(env);
  if (!hook) return;
  const signer = signerFor(env);
  if (!signer) return;
  const id = webhookIdOf(approval);
  const at = new Date();
  const event: ApprovalEvent = {
    type: APPROVAL_EVENTS[approval.state],
    timestamp: at.toISOString(),
    tenant,
    approval,
    console_path: `/console/approvals/${approval.id}`,
  };
  const body = JSON.stringify(event);
  try {
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
    if (!response.ok) console.warn(`approval webhook ${id} answered ${response.status}`);
  } catch (error) {
    console.warn(`approval webhook ${id} failed`, error);
  }
}
