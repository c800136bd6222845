import { type Context, Hono } from "hono";
import shipmentsDocument from "../openapi/shipments.json";
import { admin } from "./admin";
import { type AppEnv, requireAdmin, requireCredential } from "./auth";
import { draftEmail } from "./drafts";
import { storeOf } from "./env";
import { FAILED_ITEMS } from "./fault-shapes";
import { helpdeskMcp } from "./helpdesk/route";
import { receiveApprovalHook } from "./hooks";
import { errorResponse } from "./http";
import { notFound, serveEffect, serveRead, serveWrite } from "./lifecycle";
import { failure } from "./model";
import { EmailBody, EmailDraftBody, EmailDraftEdit, RefundBody, RerouteBody, TicketBody } from "./validation";

/**
 * The HTTP surface of the sandbox: each business endpoint behind a credential for the one tool it
 * serves (its `aud`), admin behind a token. A path that is neither is a 404 without authentication:
 * there is no tool to check a credential against.
 */
export const app = new Hono<AppEnv>();

function isAdminPath(path: string): boolean {
  return path === "/_admin" || path.startsWith("/_admin/");
}

/**
 * Where the proxy's approval webhook lands in the sandbox environment. It needs no credential:
 * each delivery is signed per Standard Webhooks, and only verified, first deliveries are recorded
 * (a repeated one is acknowledged, not recorded again).
 */
app.post("/_hooks/approvals", receiveApprovalHook);

/** The shipments API's OpenAPI document, public like any API's reference: it holds no data. */
app.get("/openapi/shipments.json", (c) => c.json(shipmentsDocument));

app.use("*", (c, next) => (isAdminPath(c.req.path) ? requireAdmin(c, next) : next()));
app.route("/_admin", admin);

// The helpdesk, a remote MCP server at /mcp (helpdesk/route.ts).
app.route("/", helpdeskMcp);

app.get("/orders/:order_id", requireCredential("lookup_order"), (c) =>
  serveRead(c, { op: "order", order_id: c.req.param("order_id") }),
);

app.get("/orders/:order_id/shipment", requireCredential("lookup_shipment"), (c) =>
  serveRead(c, { op: "shipment", order_id: c.req.param("order_id") }),
);

app.post("/orders/:order_id/shipment/reroute", requireCredential("reroute_shipment"), (c) =>
  serveEffect(c, RerouteBody, FAILED_ITEMS.reroute, (input) => ({
    op: "reroute",
    order_id: c.req.param("order_id"),
    input,
  })),
);

app.get("/customers/:customer_id", requireCredential("get_customer_profile"), (c) =>
  serveRead(c, { op: "customer", customer_id: c.req.param("customer_id") }),
);

app.get("/refund-policies", requireCredential("search_refund_policy"), (c) =>
  serveRead(c, { op: "policies", query: c.req.query("q") ?? "" }),
);

app.post("/email-drafts", requireCredential("draft_customer_email"), (c) =>
  serveWrite(c, EmailDraftBody, async (caller, input) => {
    const store = storeOf(c.env);
    const customer = await store.getCustomer(caller.tenant, input.customer_id);
    if (!customer) return failure(404, "not_found", `No customer with id '${input.customer_id}'.`);
    const order = input.order_id ? await store.getOrder(caller.tenant, input.order_id) : null;
    if (input.order_id && !order) return failure(404, "not_found", `No order with id '${input.order_id}'.`);
    if (order && order.customer_id !== customer.customer_id) {
      return failure(
        422,
        "order_customer_mismatch",
        `Order ${order.order_id} does not belong to customer ${customer.customer_id}.`,
      );
    }
    return store.createDraft(caller, draftEmail(customer, order, input.template, input.notes));
  }),
);

app.get("/email-drafts/:draft_id", requireCredential("draft_customer_email"), (c) =>
  serveRead(c, { op: "draft", draft_id: c.req.param("draft_id") }),
);

// A human edits a draft (in the CRM's UI in real life): the text changes and `version` goes up.
app.put("/email-drafts/:draft_id", requireCredential("draft_customer_email"), (c) =>
  serveWrite(c, EmailDraftEdit, async (caller, input) =>
    storeOf(c.env).editDraft(caller.tenant, c.req.param("draft_id"), input),
  ),
);

/**
 * The answer a write's Idempotency-Key got, for a caller that lost it on the way (a body cut off, a
 * connection dropped): read with the write tool's own credential, it never runs the write
 * (`read-work.ts` gives its answers).
 */
function answerOfKey(c: Context<AppEnv>): Promise<Response> {
  return serveRead(c, { op: "key_answer", key: c.req.param("key") ?? "" });
}

app.get("/tickets/idempotency-keys/:key", requireCredential("create_internal_ticket"), answerOfKey);
app.get("/refunds/idempotency-keys/:key", requireCredential("issue_refund"), answerOfKey);
app.get("/emails/idempotency-keys/:key", requireCredential("send_customer_email"), answerOfKey);
app.get("/shipments/idempotency-keys/:key", requireCredential("reroute_shipment"), answerOfKey);

app.post("/tickets", requireCredential("create_internal_ticket"), (c) =>
  serveEffect(c, TicketBody, FAILED_ITEMS.ticket, (input) => ({ op: "ticket", input })),
);

// The read create_internal_ticket's postcondition makes: only the caller's tenant's tickets exist.
app.get("/tickets/:ticket_id", requireCredential("lookup_ticket"), (c) =>
  serveRead(c, { op: "ticket", ticket_id: c.req.param("ticket_id") }),
);

app.post("/refunds", requireCredential("issue_refund"), (c) =>
  serveEffect(c, RefundBody, FAILED_ITEMS.refund, (input) => ({ op: "refund", input })),
);

// The payments API's first version, still served: like many APIs, it ignores Idempotency-Key, so
// every POST is a new refund. The refunds it makes are the order's, as any refund.
app.post("/v0/refunds", requireCredential("issue_refund_v0"), (c) =>
  serveEffect(c, RefundBody, FAILED_ITEMS.refund, (input) => ({ op: "refund", input }), "ignored"),
);

app.post("/emails", requireCredential("send_customer_email"), (c) =>
  serveEffect(c, EmailBody, FAILED_ITEMS.email, (input) => ({ op: "email", input })),
);

app.get("/emails/:email_id", requireCredential("lookup_email"), (c) =>
  serveRead(c, { op: "email", email_id: c.req.param("email_id") }),
);

app.notFound(notFound);

app.onError((error, c) => {
  // A real bug in the sandbox, not a scripted fault: keep it readable and out of the response.
  console.error(`sandbox: ${c.req.method} ${c.req.path} failed`, error);
  return errorResponse(500, "internal_error", "The sandbox failed to process the request.");
});
