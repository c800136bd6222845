import * as z from "zod";
import { defineTool } from "../catalog/define-tool";
import { ownedBy } from "../catalog/policy-vocabulary";
import { refundAutoApproval, refundWithinLimit, urgentTicketNeedsApproval } from "./policies";
import { refundDecisionContext } from "./refund-context";
import {
  CustomerIdSchema,
  CustomerSchema,
  EmailDraftSchema,
  EmailSchema,
  OrderIdSchema,
  OrderSchema,
  PolicySearchSchema,
  RefundSchema,
  TicketSchema,
} from "./schemas";
import { CURRENCY, ECHO, ISSUED_ID, PRODUCT, STATUS_CODE, TEMPLATE_TEXT, TIMESTAMP } from "./trust";

/** The demo `support` namespace: a customer-support agent's tools, from harmless to irreversible. */

export const lookupOrder = defineTool({
  name: "lookup_order",
  namespace: "support",
  version: "1",
  title: "Look up an order",
  side_effect: "read",
  description: {
    does: "Returns one order: status, items, total, the refunds already issued and how much is still refundable.",
    use_when:
      "You need facts about an order before answering or acting, e.g. lookup_order({order_id: 'A1001'}); also to check whether a refund already happened.",
    avoid_when:
      "You only have a customer's name or email: ask for the order id. Do not use it to search policies.",
    side_effects: "None. Safe to call again; the proxy retries transient upstream failures itself.",
  },
  input: z.strictObject({ order_id: OrderIdSchema }),
  output: OrderSchema,
  upstream: {
    binding: "ORDERS_API",
    request: (args) => ({ method: "GET", path: `/orders/${encodeURIComponent(args.order_id)}` }),
  },
  timeout_ms: 2_500,
  policy: [ownedBy("order_id")],
  untrusted: ["customer_note"],
  trusted_text: {
    order_id: ISSUED_ID,
    customer_id: ISSUED_ID,
    currency: CURRENCY,
    placed_at: TIMESTAMP,
    updated_at: TIMESTAMP,
    "items[].sku": PRODUCT,
    "items[].name": PRODUCT,
    "refunds[].refund_id": ISSUED_ID,
    "refunds[].reason": STATUS_CODE,
    "refunds[].status": STATUS_CODE,
    "refunds[].created_at": TIMESTAMP,
  },
  freshness: { resource: (order) => `order:${order.order_id}`, version: (order) => order.version },
});

export const searchRefundPolicy = defineTool({
  name: "search_refund_policy",
  namespace: "support",
  version: "1",
  title: "Search the refund policy",
  side_effect: "read",
  description: {
    does: "Searches the company's refund policy and returns the matching sections with short summaries.",
    use_when:
      "You must decide whether a refund is allowed or how much, e.g. search_refund_policy({query: 'damaged item'}).",
    avoid_when:
      "You need facts about a specific order (use lookup_order) or customer (use get_customer_profile).",
    side_effects: "None. Safe to call again.",
  },
  input: z.strictObject({
    query: z
      .string()
      .min(3)
      .max(200)
      .describe("A few words describing the situation, such as 'late delivery' or 'price error'."),
  }),
  output: PolicySearchSchema,
  upstream: {
    binding: "CRM_API",
    request: (args) => ({ method: "GET", path: "/refund-policies", query: { q: args.query } }),
  },
  timeout_ms: 2_500,
  // Policy documents are edited outside this system (and a page can be poisoned): their text is data.
  untrusted: ["results[].title", "results[].summary"],
  trusted_text: { "results[].policy_id": ISSUED_ID },
});

export const getCustomerProfile = defineTool({
  name: "get_customer_profile",
  namespace: "support",
  version: "1",
  title: "Get a customer profile",
  side_effect: "read",
  description: {
    does: "Returns a customer's profile: tier, city and country, and their recent messages to support. Contact details are masked.",
    use_when:
      "You need to know who the customer is or their tier, e.g. get_customer_profile({customer_id: 'C100'}); the id is on the order.",
    avoid_when: "You only need order facts (use lookup_order). Never copy contact details into tickets.",
    side_effects: "None. Safe to call again.",
  },
  input: z.strictObject({ customer_id: CustomerIdSchema }),
  output: CustomerSchema,
  upstream: {
    binding: "CRM_API",
    request: (args) => ({ method: "GET", path: `/customers/${encodeURIComponent(args.customer_id)}` }),
  },
  timeout_ms: 2_500,
  policy: [ownedBy("customer_id")],
  sensitive: { name: "name", email: "email", phone: "phone", address: "address" },
  untrusted: ["recent_messages[].subject", "recent_messages[].body"],
  trusted_text: {
    customer_id: ISSUED_ID,
    created_at: TIMESTAMP,
    updated_at: TIMESTAMP,
    "recent_messages[].message_id": ISSUED_ID,
    "recent_messages[].channel": STATUS_CODE,
    "recent_messages[].received_at": TIMESTAMP,
  },
});

export const draftCustomerEmail = defineTool({
  name: "draft_customer_email",
  namespace: "support",
  version: "1",
  title: "Draft a customer email",
  side_effect: "draft",
  description: {
    does: "Stores a draft email to a customer, rendered from a template; returns draft_id, version, subject and body. Nothing is sent.",
    use_when:
      "A customer must be emailed, e.g. draft_customer_email({customer_id: 'C100', template: 'refund_confirmation', order_id: 'A1001'}); then send it with send_customer_email.",
    avoid_when: "No email is needed.",
    side_effects:
      "Stores one draft (a write unit); nothing is sent. The same call in a run returns the same draft.",
  },
  input: z.strictObject({
    customer_id: CustomerIdSchema,
    template: z
      .enum(["refund_confirmation", "shipping_delay", "apology", "general_reply"])
      .describe(
        "Which template: refund_confirmation after a refund, shipping_delay for late orders, apology for service failures, general_reply otherwise.",
      ),
    order_id: OrderIdSchema.optional().describe("The order the email is about, such as A1001, if any."),
    notes: z
      .string()
      .max(500)
      .optional()
      .describe("Facts to include in the draft, in plain words; at most 500 characters."),
  }),
  output: EmailDraftSchema,
  upstream: {
    binding: "EMAIL_API",
    request: (args) => ({ method: "POST", path: "/email-drafts", body: args }),
  },
  timeout_ms: 2_500,
  trusted_text: {
    draft_id: ISSUED_ID,
    customer_id: ECHO,
    subject: TEMPLATE_TEXT,
    body: TEMPLATE_TEXT,
    created_at: TIMESTAMP,
  },
  policy: [ownedBy("customer_id"), ownedBy("order_id")],
});

export const createInternalTicket = defineTool({
  name: "create_internal_ticket",
  namespace: "support",
  version: "1",
  title: "Create an internal ticket",
  side_effect: "write",
  description: {
    does: "Opens a ticket for the human support team about a customer, with a priority and a summary.",
    use_when:
      "Something needs a human: a refund above your limit, a complaint, a suspected fraud, e.g. create_internal_ticket({customer_id: 'C100', priority: 'high', summary: 'Refund of 900.00 requested for A1001'}).",
    avoid_when:
      "You can resolve the request yourself with the other tools. Do not open one ticket per message.",
    side_effects:
      "Creates one ticket. Repeating the same call in a run returns the same ticket instead of a duplicate. Urgent tickets page on-call staff and wait for a human approval first.",
  },
  input: z.strictObject({
    customer_id: CustomerIdSchema,
    priority: z
      .enum(["low", "normal", "high", "urgent"])
      .describe(
        "How fast a human must act: urgent for money or safety at risk now, high for today, else normal or low.",
      ),
    summary: z
      .string()
      .min(10)
      .max(500)
      .describe("What happened and what the human should do, in one or two sentences; 10 to 500 characters."),
  }),
  output: TicketSchema,
  upstream: { binding: "CRM_API", request: (args) => ({ method: "POST", path: "/tickets", body: args }) },
  timeout_ms: 5_000,
  trusted_text: {
    ticket_id: ISSUED_ID,
    customer_id: ECHO,
    priority: ECHO,
    summary: ECHO,
    status: STATUS_CODE,
    created_at: TIMESTAMP,
  },
  policy: [ownedBy("customer_id"), urgentTicketNeedsApproval],
  // A 201 is a claim; the ticket the CRM shows when asked for it is the fact.
  observe: {
    tool: "lookup_ticket",
    args: (_args, ticket) => ({ ticket_id: ticket.ticket_id }),
    answer_by_key: (key) => `/tickets/idempotency-keys/${encodeURIComponent(key)}`,
    verify: (args, ticket, observed) => {
      const found = observed as { ticket_id?: string; customer_id?: string } | null;
      if (found === null) {
        return {
          ok: false,
          code: "silent_failure",
          message: `The CRM confirmed ticket ${ticket.ticket_id}, but reading it back found no such ticket.`,
          side_effect_confirmed: false,
        };
      }
      return found.ticket_id === ticket.ticket_id && found.customer_id === args.customer_id
        ? { ok: true }
        : {
            ok: false,
            code: "silent_failure",
            message: `The CRM confirmed ticket ${ticket.ticket_id} for ${args.customer_id}, but reading it back shows a different ticket.`,
            side_effect_confirmed: false,
          };
    },
  },
});

export const lookupTicket = defineTool({
  name: "lookup_ticket",
  namespace: "support",
  version: "1",
  title: "Look up an internal ticket",
  side_effect: "read",
  description: {
    does: "Returns one internal ticket by id: customer, priority, summary, status and when it was opened.",
    use_when:
      "You need to know whether a ticket exists or what it says, e.g. lookup_ticket({ticket_id: 'tk_4Fz0aQ9mW2xYc7Lp1Rt8Vb'}); the id comes from create_internal_ticket.",
    avoid_when:
      "You want to open a ticket (use create_internal_ticket) or you have no ticket id: tickets cannot be searched.",
    side_effects: "None. Safe to call again; the proxy retries transient upstream failures itself.",
  },
  input: z.strictObject({
    ticket_id: z
      .string()
      .min(1)
      .max(64)
      .describe("The ticket id create_internal_ticket returned, such as tk_4Fz0aQ9mW2xYc7Lp1Rt8Vb."),
  }),
  output: TicketSchema,
  upstream: {
    binding: "CRM_API",
    request: (args) => ({ method: "GET", path: `/tickets/${encodeURIComponent(args.ticket_id)}` }),
  },
  timeout_ms: 2_500,
  // Output trust (catalog rule): internal tickets are written by this namespace's agents and staff.
  trusted_text: {
    ticket_id: ISSUED_ID,
    customer_id: ISSUED_ID,
    priority: STATUS_CODE,
    summary: "written by an agent through create_internal_ticket or by support staff, never by a customer",
    status: STATUS_CODE,
    created_at: TIMESTAMP,
  },
});

export const issueRefund = defineTool({
  name: "issue_refund",
  namespace: "support",
  version: "1",
  title: "Issue a refund",
  side_effect: "destructive",
  description: {
    does: "Refunds money to the customer's original payment method for one order. Money leaves the company.",
    use_when:
      "The policy allows a refund and you know the order and amount, e.g. issue_refund({order_id: 'A1001', amount_cents: 1999, reason: 'out_of_stock'}).",
    avoid_when:
      "You have not checked the order with lookup_order, the amount exceeds what is refundable, or the customer only asked a question.",
    side_effects:
      "Irreversible money movement. Waits for a human approval (except small refunds the tenant auto-approves): you get approval_required, wait, then call again with the same arguments. Issued at most once per identical call in a run.",
  },
  input: z.strictObject({
    order_id: OrderIdSchema,
    amount_cents: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .describe(
        "Amount to refund in cents, a whole number: 1999 means 19.99. At most the order's refundable_cents.",
      ),
    reason: z
      .enum(["user_cancel", "out_of_stock", "price_error"])
      .describe(
        "Why: user_cancel when the customer cancelled, out_of_stock when we could not deliver, price_error when the price was wrong.",
      ),
  }),
  output: RefundSchema,
  upstream: {
    binding: "PAYMENTS_API",
    request: (args) => ({ method: "POST", path: "/refunds", body: args }),
  },
  timeout_ms: 8_000,
  trusted_text: {
    refund_id: ISSUED_ID,
    order_id: ECHO,
    reason: ECHO,
    status: STATUS_CODE,
    created_at: TIMESTAMP,
  },
  policy: [ownedBy("order_id"), refundWithinLimit, refundAutoApproval],
  decision_context: refundDecisionContext,
  // A 201 is a claim; the refund listed on the order is the fact.
  observe: {
    tool: "lookup_order",
    args: (args) => ({ order_id: args.order_id }),
    answer_by_key: (key) => `/refunds/idempotency-keys/${encodeURIComponent(key)}`,
    verify: (_args, refund, observed) => {
      const refunds = (observed as { refunds?: Array<{ refund_id: string }> } | null)?.refunds ?? [];
      return refunds.some((entry) => entry.refund_id === refund.refund_id)
        ? { ok: true }
        : {
            ok: false,
            code: "silent_failure",
            message: `The payment API confirmed refund ${refund.refund_id}, but the order shows no such refund.`,
          };
    },
  },
});

export const lookupEmail = defineTool({
  name: "lookup_email",
  namespace: "support",
  version: "1",
  title: "Look up a sent email",
  side_effect: "read",
  description: {
    does: "Returns one sent email: subject and body as sent, its draft and status.",
    use_when:
      "You must check what an email said, e.g. lookup_email({email_id: 'em_4Fz0aQ9mW2xYc7Lp1Rt8Vb'}).",
    avoid_when: "You want to send an email.",
    side_effects: "None. Safe to call again.",
  },
  input: z.strictObject({
    email_id: z.string().min(1).max(64).describe("The email_id send_customer_email returned."),
  }),
  output: EmailSchema,
  upstream: {
    binding: "EMAIL_API",
    request: (args) => ({ method: "GET", path: `/emails/${encodeURIComponent(args.email_id)}` }),
  },
  timeout_ms: 2_500,
  trusted_text: {
    email_id: ISSUED_ID,
    customer_id: ISSUED_ID,
    subject:
      "the text of a stored draft: rendered from the company's template and the agent's notes, or edited by staff",
    body: "the text of a stored draft: rendered from the company's template and the agent's notes, or edited by staff",
    draft_id: ISSUED_ID,
    status: STATUS_CODE,
    queued_at: TIMESTAMP,
  },
});

export const sendCustomerEmail = defineTool({
  name: "send_customer_email",
  namespace: "support",
  version: "2",
  title: "Send a customer email",
  side_effect: "destructive",
  description: {
    does: "Sends a stored draft, exactly its subject and body, to the customer's address on file. It cannot be recalled.",
    use_when:
      "A draft from draft_customer_email must go out now, e.g. send_customer_email({draft_id: 'dr_4Fz0aQ9mW2xYc7Lp1Rt8Vb', draft_version: 1}).",
    avoid_when: "You have no draft yet: call draft_customer_email first.",
    side_effects:
      "A real email reaches a person. Waits for a human approval: you get approval_required, wait, then call again with the same arguments. A draft edited since is not sent (conflict_error). Sent at most once per identical call.",
  },
  input: z.strictObject({
    draft_id: z
      .string()
      .regex(/^dr_[0-9A-Za-z]{1,60}$/, "a draft id looks like dr_ followed by letters and digits")
      .describe("The draft_id draft_customer_email returned."),
    draft_version: z.number().int().min(1).describe("The version draft_customer_email returned, such as 1."),
  }),
  output: EmailSchema,
  upstream: {
    binding: "EMAIL_API",
    // The approval binds to these exact arguments, so to the draft's version: the upstream refuses
    // (409) a send whose version is not the draft's current one, and nothing edited goes out.
    request: (args) => ({
      method: "POST",
      path: "/emails",
      body: { draft_id: args.draft_id, version: args.draft_version },
    }),
  },
  timeout_ms: 5_000,
  trusted_text: {
    email_id: ISSUED_ID,
    customer_id: ISSUED_ID,
    subject: "the text of the stored draft the human approved, sent word for word",
    body: "the text of the stored draft the human approved, sent word for word",
    draft_id: ECHO,
    status: STATUS_CODE,
    queued_at: TIMESTAMP,
  },
  open_world: true,
  // A 202 is a claim; the email the email API lists, with the draft's text, is the fact.
  observe: {
    tool: "lookup_email",
    args: (_args, email) => ({ email_id: email.email_id }),
    answer_by_key: (key) => `/emails/idempotency-keys/${encodeURIComponent(key)}`,
    verify: (args, email, observed) => {
      const seen = observed as {
        email_id?: string;
        draft_id?: string | null;
        draft_version?: number | null;
        body?: string;
      } | null;
      if (!seen?.email_id) {
        return {
          ok: false,
          code: "silent_failure",
          message: `The email API confirmed email ${email.email_id}, but it has no such email.`,
        };
      }
      if (
        seen.draft_id !== args.draft_id ||
        seen.draft_version !== args.draft_version ||
        seen.body !== email.body
      ) {
        return {
          ok: false,
          code: "partial_success",
          message: `Email ${email.email_id} exists but is not draft ${args.draft_id} version ${args.draft_version} as approved.`,
        };
      }
      return { ok: true };
    },
  },
});

export const supportTools = [
  lookupOrder,
  searchRefundPolicy,
  getCustomerProfile,
  draftCustomerEmail,
  createInternalTicket,
  lookupTicket,
  issueRefund,
  sendCustomerEmail,
  lookupEmail,
];
