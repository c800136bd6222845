import { type Context, Hono } from "hono";
import type * as z from "zod";
import type { AppEnv } from "./auth";
import { storeOf } from "./env";
import { FaultSpecSchema, toFaultSpec } from "./faults";
import { helpdeskAdmin } from "./helpdesk/admin";
import { errorResponse } from "./http";
import { describeIssues, EmailDraftEdit, OrderNoteEdit, WebhookFailureBody } from "./validation";

/**
 * Test, demo and evaluation controls. Mounted under `/_admin`, where the router has already
 * required the admin token; nothing here is reachable with a business credential.
 */
export const admin = new Hono<AppEnv>();

admin.post("/faults", async (c) => {
  let json: unknown;
  try {
    json = await c.req.json();
  } catch {
    return errorResponse(400, "invalid_request", "Request body must be valid JSON.");
  }
  const parsed = FaultSpecSchema.safeParse(json);
  if (!parsed.success) return errorResponse(400, "invalid_request", describeIssues(parsed.error));
  const fault = await storeOf(c.env).armFault(toFaultSpec(parsed.data));
  return c.json({ fault }, 201);
});

admin.route("/helpdesk", helpdeskAdmin);

admin.get("/faults", async (c) => c.json({ faults: await storeOf(c.env).listFaults() }));

admin.get("/requests", async (c) =>
  c.json({ requests: await storeOf(c.env).listRequests(c.req.query("run_id") ?? null) }),
);

/**
 * The answer stored under one tenant's Idempotency-Key, whole even when its delivery was cut off:
 * what a test holds a lost answer to. A refusal before the request ran (a key reused for another
 * request, a malformed body) stores nothing, so it reads as `unknown`.
 */
admin.get("/idempotency-keys/:key", async (c) => {
  const tenant = c.req.query("tenant");
  if (!tenant) return errorResponse(400, "invalid_request", "Give the tenant: ?tenant=<tenant id>.");
  const answer = await storeOf(c.env).answerOfIdempotencyKey(tenant, c.req.param("key"));
  return c.json(
    answer.state === "answered"
      ? { state: answer.state, status: answer.status, body: JSON.parse(answer.body) as unknown }
      : { state: answer.state },
  );
});

/** The last credential each tool of a run presented: what a leaky upstream's logs would hold. */
admin.get("/credentials", async (c) => {
  const runId = c.req.query("run_id");
  if (!runId) return errorResponse(400, "invalid_request", "Give the run: ?run_id=<run id>.");
  return c.json({ credentials: await storeOf(c.env).listCredentials(runId) });
});

admin.get("/refunds", async (c) =>
  c.json({
    refunds: await storeOf(c.env).listRefunds({
      tenant: c.req.query("tenant") ?? null,
      order_id: c.req.query("order_id") ?? null,
    }),
  }),
);

admin.get("/tickets", async (c) =>
  c.json({ tickets: await storeOf(c.env).listTickets(c.req.query("tenant") ?? null) }),
);

admin.get("/emails", async (c) =>
  c.json({ emails: await storeOf(c.env).listEmails(c.req.query("tenant") ?? null) }),
);

admin.get("/shipments", async (c) =>
  c.json({ shipments: await storeOf(c.env).listShipments(c.req.query("tenant") ?? null) }),
);

admin.get("/email-drafts", async (c) =>
  c.json({ drafts: await storeOf(c.env).listDrafts(c.req.query("tenant") ?? null) }),
);

/**
 * A member of staff edits a stored draft (`?tenant=` required), as in the CRM's UI: same rules as
 * `PUT /email-drafts/{id}`, the text changes and `version` goes up by one.
 */
admin.put("/email-drafts/:draft_id", async (c) => {
  const edit = await tenantEdit(c, EmailDraftEdit);
  if (edit instanceof Response) return edit;
  const outcome = await storeOf(c.env).editDraft(edit.tenant, c.req.param("draft_id"), edit.data);
  return c.json(outcome.body, outcome.status as 200);
});

/**
 * A customer leaves a note on their order (`?tenant=` required; body `{"note": "..."}`, at most 2,000
 * characters): third-party text that `GET /orders/{id}` then returns as `customer_note`.
 */
admin.put("/orders/:order_id/customer-note", async (c) => {
  const edit = await tenantEdit(c, OrderNoteEdit);
  if (edit instanceof Response) return edit;
  const orderId = c.req.param("order_id");
  if (!(await storeOf(c.env).setOrderNote(edit.tenant, orderId, edit.data.note))) {
    return errorResponse(404, "not_found", `Tenant ${edit.tenant} has no order ${orderId}.`);
  }
  return c.json({ order_id: orderId, customer_note: edit.data.note });
});

/** An admin edit of one tenant's record: `?tenant=` and a JSON body `schema` accepts, or the 400 saying why not. */
async function tenantEdit<T>(
  c: Context<AppEnv>,
  schema: z.ZodType<T>,
): Promise<{ tenant: string; data: T } | Response> {
  const tenant = c.req.query("tenant");
  if (!tenant) return errorResponse(400, "invalid_request", "Give the tenant: ?tenant=<tenant id>.");
  let json: unknown;
  try {
    json = await c.req.json();
  } catch {
    return errorResponse(400, "invalid_request", "Request body must be valid JSON.");
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return errorResponse(400, "invalid_request", describeIssues(parsed.error));
  return { tenant, data: parsed.data };
}

/** Approval webhooks: those verified and recorded, and those refused with the reason. */
admin.get("/notifications", async (c) => {
  const store = storeOf(c.env);
  return c.json({
    notifications: await store.listNotifications(),
    rejections: await store.listWebhookRejections(),
  });
});

/**
 * Makes the webhook receiver fail, as a receiver that is down: `{count, webhook_id?}` answers the
 * next `count` verified deliveries (only those of `webhook_id`, when given) 503 `receiver_unavailable`,
 * listed among the rejections, and records none of them. Armed failures add up; reset clears them.
 */
admin.post("/notifications/failures", async (c) => {
  let json: unknown;
  try {
    json = await c.req.json();
  } catch {
    return errorResponse(400, "invalid_request", "Request body must be valid JSON.");
  }
  const parsed = WebhookFailureBody.safeParse(json);
  if (!parsed.success) return errorResponse(400, "invalid_request", describeIssues(parsed.error));
  const failure = await storeOf(c.env).armWebhookFailure({
    webhook_id: parsed.data.webhook_id ?? null,
    remaining: parsed.data.count,
  });
  return c.json({ failure }, 201);
});

admin.post("/reset", async (c) => {
  await storeOf(c.env).reset();
  return c.json({ ok: true });
});
