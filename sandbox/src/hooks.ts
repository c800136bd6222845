import type { Context } from "hono";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import type { AppEnv } from "./auth";
import { type SandboxEnv, storeOf } from "./env";
import { errorResponse } from "./http";

/**
 * Where the proxy's approval webhook lands in the sandbox environment, verified the way any
 * receiver should verify a Standard Webhooks delivery: the signature over `webhook-id`,
 * `webhook-timestamp` and the exact body with the shared secret (`Webhook.verify`, which also
 * refuses a timestamp more than five minutes off), then the `webhook-id` against those already
 * received: a delivery of an id already recorded is acknowledged (2xx) and counted, never recorded
 * twice, as Standard Webhooks asks of a receiver whose sender retries until it gets a 2xx. Only
 * verified deliveries are recorded; refusals are logged with their reason. A failure armed by
 * `POST /_admin/notifications/failures` answers verified deliveries 503, as a receiver that is down.
 */

let cached: { secret: string; webhook: Webhook | null } | null = null;

function verifierFor(env: SandboxEnv): Webhook | null {
  const secret = env.APPROVAL_WEBHOOK_SECRET;
  if (!secret) return null;
  if (cached?.secret !== secret) {
    let webhook: Webhook | null = null;
    try {
      webhook = new Webhook(secret);
    } catch {
      webhook = null;
    }
    cached = { secret, webhook };
  }
  return cached.webhook;
}

interface Refusal {
  status: 400 | 401 | 503;
  code: string;
  message: string;
}

/** What `Webhook.verify` threw, as an answer: malformed headers are 400, an unauthentic delivery 401. */
function refusalFor(error: unknown): Refusal {
  const message = error instanceof Error ? error.message : String(error);
  if (!(error instanceof WebhookVerificationError)) {
    // The signature verified, but the body is not JSON: the sender's bug, not an attack.
    return { status: 400, code: "invalid_request", message: "The webhook body must be JSON." };
  }
  if (message === "Missing required headers")
    return {
      status: 400,
      code: "missing_signature",
      message: "Send webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks).",
    };
  if (message === "Invalid Signature Headers")
    return {
      status: 400,
      code: "invalid_timestamp",
      message: "webhook-timestamp must be seconds since the epoch.",
    };
  if (message.startsWith("Message timestamp"))
    return {
      status: 401,
      code: "stale_timestamp",
      message: "webhook-timestamp is more than five minutes from now: a delayed or replayed delivery.",
    };
  return { status: 401, code: "invalid_signature", message: "No webhook-signature matches the body." };
}

export async function receiveApprovalHook(c: Context<AppEnv>): Promise<Response> {
  const webhook = verifierFor(c.env);
  if (!webhook) {
    return errorResponse(
      500,
      "server_misconfigured",
      "APPROVAL_WEBHOOK_SECRET is missing or not a whsec_ secret: the sandbox cannot verify webhooks.",
    );
  }
  const store = storeOf(c.env);
  const payload = await c.req.text();
  const headers = {
    "webhook-id": c.req.header("webhook-id") ?? "",
    "webhook-timestamp": c.req.header("webhook-timestamp") ?? "",
    "webhook-signature": c.req.header("webhook-signature") ?? "",
  };
  const webhookId = headers["webhook-id"] || null;
  const refuse = async (refusal: Refusal) => {
    await store.recordWebhookRejection({ webhook_id: webhookId, ...refusal });
    return errorResponse(refusal.status, refusal.code, refusal.message);
  };
  let body: unknown;
  try {
    body = webhook.verify(payload, headers);
  } catch (error) {
    return refuse(refusalFor(error));
  }
  if (body === undefined)
    return refuse({ status: 400, code: "invalid_request", message: "The webhook body is empty." });
  if (await store.takeWebhookFailure(headers["webhook-id"]))
    return refuse({
      status: 503,
      code: "receiver_unavailable",
      message:
        "The receiver is failing on purpose (POST /_admin/notifications/failures); send it again later.",
    });
  // Verified, so the id is the sender's: a second delivery of it (a retry after a lost answer, or a
  // replay) is acknowledged, so the sender stops, and not processed again.
  const fresh = await store.recordVerifiedNotification({
    webhook_id: headers["webhook-id"],
    webhook_timestamp: Number.parseInt(headers["webhook-timestamp"], 10),
    body,
  });
  if (!fresh) return c.json({ ok: true, duplicate: true }, 200);
  return c.json({ ok: true }, 202);
}
