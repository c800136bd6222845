import * as z from "zod";
import { defineTool } from "../catalog/define-tool";
import { ownedBy, refundAutoApproval, refundWithinLimit, urgentTicketNeedsApproval } from "./policies";
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
});

export const draftCustomerEmail = defineTool({
  name: "draft_customer_email",
  namespace: "support",
  version: "1",
  title: "Draft a customer email",
  side_effect: "read",
  description: {
    does: "Writes a draft email to a customer from a template. Nothing is sent.",
    use_when:
      "You want wording to review before sending, e.g. draft_customer_email({customer_id: 'C100', template: 'refund_confirmation', order_id: 'A1001'}).",
    avoid_when: "The email must actually go out: use send_customer_email with the reviewed subject and body.",
    side_effects: "None. Drafts are not stored or sent.",
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
  policy: [ownedBy("customer_id"), urgentTicketNeedsApproval],
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
  policy: [ownedBy("order_id"), refundWithinLimit, refundAutoApproval],
  // A 201 is a claim; the refund listed on the order is the fact.
  observe: {
    tool: "lookup_order",
    args: (args) => ({ order_id: args.order_id }),
    verify: (_args, refund, observed) => {
      const refunds = (observed as { refunds?: Array<{ refund_id: string }> }).refunds ?? [];
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

export const sendCustomerEmail = defineTool({
  name: "send_customer_email",
  namespace: "support",
  version: "1",
  title: "Send a customer email",
  side_effect: "destructive",
  description: {
    does: "Sends an email to the customer's address on file. It cannot be recalled.",
    use_when:
      "You have a reviewed subject and body, e.g. from draft_customer_email, and the customer must be told something now.",
    avoid_when: "You are unsure of the content or only drafting: use draft_customer_email instead.",
    side_effects:
      "A real email reaches a person. Waits for a human approval: you get approval_required, wait, then call again with the same arguments. Sent at most once per identical call.",
  },
  input: z.strictObject({
    customer_id: CustomerIdSchema,
    subject: z.string().min(1).max(150).describe("The subject line, at most 150 characters."),
    body: z.string().min(1).max(5_000).describe("The plain-text body, at most 5000 characters."),
  }),
  output: EmailSchema,
  upstream: { binding: "EMAIL_API", request: (args) => ({ method: "POST", path: "/emails", body: args }) },
  timeout_ms: 5_000,
  policy: [ownedBy("customer_id")],
  open_world: true,
});

export const supportTools = [
  lookupOrder,
  searchRefundPolicy,
  getCustomerProfile,
  draftCustomerEmail,
  createInternalTicket,
  issueRefund,
  sendCustomerEmail,
];
