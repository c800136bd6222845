import { Webhook } from "standardwebhooks";
import { type EgressLimits, guardedFetch } from "../egress/guarded-fetch";
import { refusedTarget, type TargetRefusal } from "../egress/target";
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

/**
 * A URL var reaches a receiver the deployment does not run, through the egress guard: https, a
 * public host, no redirect followed (a redirected delivery fails and is sent again later), 5 s.
 */
const RECEIVER_LIMITS: EgressLimits = { max_redirects: 0, max_bytes: 0, timeout_ms: 5_000 };

async function sendGuarded(request: Request): Promise<Response> {
  const answer = await guardedFetch(
    request.url,
    { method: "POST", headers: Object.fromEntries(request.headers), body: await request.text() },
    { limits: RECEIVER_LIMITS, ownHosts: [], discardBody: true },
  );
  if (answer.ok) return new Response(null, { status: answer.status });
  throw new Error(`not delivered: ${JSON.stringify(answer.failure)}`);
}

/** A service binding gets the sandbox's hook path; a URL var is used exactly as given (chat webhooks have their own paths). */
function hookTarget(env: object): { url: string; send: Send } | null {
  const value = (env as Record<string, unknown>).APPROVAL_WEBHOOK;
  if (typeof value === "string" && /^https?:\/\//.test(value)) {
    let refused: TargetRefusal | null;
    try {
      refused = refusedTarget(new URL(value), new Set());
    } catch {
      refused = { reason: "not_https" };
    }
    if (refused)
      return warnOnce(`webhook not sent: APPROVAL_WEBHOOK is not a public https URL (${refused.reason})`);
    return { url: value, send: sendGuarded };
  }
  if (typeof value === "object" && value !== null && typeof (value as Fetcher).fetch === "function") {
    const fetcher = value as Fetcher;
    return { url: "https://upstream.internal/_hooks/approvals", send: (request) => fetcher.fetch(request) };
  }
  return null;
}

let cachedSigner: { secret: string; webhook: Webhook | null } | null = null;
const warned = new Set<string>();

/** Says once per isolate why no webhook goes out: a hook that is never sent must not be silent. */
function warnOnce(message: string): null {
  if (!warned.has(message)) {
    warned.add(message);
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
