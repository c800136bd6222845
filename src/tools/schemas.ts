import * as z from "zod";

/**
 * Output whitelists of the support namespace. `z.object` strips every field it does not name,
 * so an upstream that adds `internal_notes` or `risk_score` never leaks it into a model's context.
 */

export const OrderIdSchema = z
  .string()
  .regex(/^[A-Z]\d{4}$/, "an order id is one capital letter and four digits, such as A1001")
  .describe("The order id, one capital letter and four digits, such as A1001.");

export const CustomerIdSchema = z
  .string()
  .regex(/^C\d{3}$/, "a customer id is C and three digits, such as C100")
  .describe("The customer id, C and three digits, such as C100. Find it on the order (customer_id).");

export const RefundSchema = z.object({
  refund_id: z.string(),
  order_id: z.string().optional(),
  amount_cents: z.number().int(),
  reason: z.string(),
  status: z.string(),
  created_at: z.string(),
});

export const OrderSchema = z.object({
  order_id: z.string(),
  customer_id: z.string(),
  status: z.enum(["processing", "shipped", "delivered", "cancelled"]),
  currency: z.string(),
  total_cents: z.number().int(),
  refundable_cents: z.number().int(),
  placed_at: z.string(),
  updated_at: z.string(),
  version: z.number().int(),
  items: z.array(
    z.object({
      sku: z.string(),
      name: z.string(),
      quantity: z.number().int(),
      unit_price_cents: z.number().int(),
    }),
  ),
  refunds: z.array(RefundSchema.omit({ order_id: true })),
  /** Written by the customer at checkout: third-party text. */
  customer_note: z.string().optional(),
});

export const PolicySearchSchema = z.object({
  results: z.array(z.object({ policy_id: z.string(), title: z.string(), summary: z.string() })),
  total: z.number().int(),
});

export const CustomerSchema = z.object({
  customer_id: z.string(),
  name: z.string(),
  email: z.string(),
  phone: z.string(),
  tier: z.enum(["standard", "gold", "platinum"]),
  address: z.object({ line1: z.string(), city: z.string(), postal_code: z.string(), country: z.string() }),
  created_at: z.string(),
  updated_at: z.string(),
  /** Messages the customer wrote to support: third-party text. */
  recent_messages: z
    .array(
      z.object({
        message_id: z.string(),
        channel: z.string(),
        subject: z.string(),
        body: z.string(),
        received_at: z.string(),
      }),
    )
    .default([]),
});

/** A stored draft: what `send_customer_email` sends, word for word, at this `version`. */
export const EmailDraftSchema = z.object({
  draft_id: z.string(),
  customer_id: z.string(),
  subject: z.string(),
  body: z.string(),
  created_at: z.string(),
  version: z.number().int(),
});

export const TicketSchema = z.object({
  ticket_id: z.string(),
  customer_id: z.string(),
  priority: z.string(),
  summary: z.string(),
  status: z.string(),
  created_at: z.string(),
});

export const EmailSchema = z.object({
  email_id: z.string(),
  customer_id: z.string(),
  subject: z.string(),
  body: z.string(),
  draft_id: z.string().nullable(),
  draft_version: z.number().int().nullable(),
  status: z.string(),
  queued_at: z.string(),
});
