import { Webhook } from "standardwebhooks";
import type { Env } from "../env";

type Send = (request: Request) => Promise<Response>;

/** One event to post: its Standard Webhooks id (the receiver's dedup key), when it is sent, the exact body. */
export interface SignedEvent {
  id: string;
  at: Date;
  body: string;
}

/**
 * What became of one delivery: `acknowledged` (the receiver answered 2xx), `failed` (another
 * status, or no answer: worth another attempt), `not_configured` (no hook or no usable secret:
 * nothing was sent, and nothing will be until the deployment changes).
 */
export type DeliveryOutcome = "acknowledged" | "failed" | "not_configured";

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
      "webhook not sent: APPROVAL_WEBHOOK is set but APPROVAL_WEBHOOK_SECRET is not, and webhooks are never sent unsigned",
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
    warnOnce("webhook not sent: APPROVAL_WEBHOOK_SECRET is not a whsec_ secret (whsec_ + base64)")
  );
}

/**
 * Posts one event to the deployment's webhook (`APPROVAL_WEBHOOK`: a service binding or a URL),
 * signed per Standard Webhooks with `APPROVAL_WEBHOOK_SECRET` (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`); without the secret nothing is sent, never unsigned. Never throws: a
 * failure is logged and answered, so the caller decides whether to try again.
 */
export async function postSignedEvent(env: Env, event: SignedEvent): Promise<DeliveryOutcome> {
  const hook = hookTarget(env);
  if (!hook) return "not_configured";
  const signer = signerFor(env);
  if (!signer) return "not_configured";
  try {
    const response = await hook.send(
      new Request(hook.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": event.id,
          "webhook-timestamp": String(Math.floor(event.at.getTime() / 1000)),
          "webhook-signature": signer.sign(event.id, event.at, event.body),
        },
        body: event.body,
        signal: AbortSignal.timeout(5_000),
      }),
    );
    await response.body?.cancel();
    if (response.ok) return "acknowledged";
    console.warn(`webhook ${event.id} answered ${response.status}`);
  } catch (error) {
    console.warn(`webhook ${event.id} failed`, error);
  }
  return "failed";
}
