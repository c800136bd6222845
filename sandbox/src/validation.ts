import * as z from "zod";

/**
 * Request bodies, checked about as loosely as a typical production API: types, required fields and
 * sane lengths, unknown fields ignored. The proxy validates more strictly before it ever calls.
 */

const id = z.string().trim().min(1).max(64);

export const RefundBody = z.object({
  order_id: id,
  amount_cents: z.number().int().min(1).max(100_000_000),
  reason: z.string().trim().min(1).max(500),
});

export const TicketBody = z.object({
  customer_id: id,
  priority: z.enum(["low", "normal", "medium", "high", "urgent"]),
  summary: z.string().trim().min(1).max(5000),
});

/** A send names a stored draft and the version that was approved; the text comes from the draft. */
export const EmailBody = z.object({
  draft_id: id,
  version: z.number().int().min(1),
});

/** A human's edit of a stored draft; each edit bumps its version. */
export const EmailDraftEdit = z
  .object({
    subject: z.string().trim().min(1).max(300).optional(),
    body: z.string().trim().min(1).max(50_000).optional(),
  })
  .refine((edit) => edit.subject !== undefined || edit.body !== undefined, "give subject or body");

/**
 * `POST /_admin/notifications/failures`: the webhook receiver answers the next `count` verified
 * deliveries 503 (only those of `webhook_id`, when given).
 */
export const WebhookFailureBody = z.strictObject({
  count: z.number().int().min(1).max(100),
  webhook_id: z.string().min(1).max(200).optional(),
});

/** `PUT /_admin/orders/{id}/customer-note`: the note a customer leaves on their order. */
export const OrderNoteEdit = z.object({ note: z.string().min(1).max(2_000) });

export const EmailDraftBody = z.object({
  customer_id: id,
  template: z.string().trim().min(1).max(100),
  order_id: id.nullish(),
  notes: z.string().max(5000).nullish(),
});

const line = (max: number) => z.string().trim().min(1).max(max);

/** A new destination for a shipment, with the reason the customer or support gave. */
export const RerouteBody = z.object({
  destination: z.object({
    name: line(200),
    street: line(200),
    city: line(100),
    postal_code: line(20),
    country: z.string().regex(/^[A-Z]{2}$/, "must be an ISO 3166-1 alpha-2 code such as US"),
  }),
  reason: line(500),
});

/** One readable line, the way APIs phrase validation errors: `field: problem; other: problem`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ");
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** Parses a raw JSON body against a schema; the text is kept raw because idempotency hashes it. */
export function parseBody<T>(schema: z.ZodType<T>, raw: string): Parsed<T> {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { ok: false, message: "Request body must be valid JSON." };
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return { ok: false, message: "Request body must be a JSON object." };
  }
  const result = schema.safeParse(json);
  return result.success
    ? { ok: true, value: result.data }
    : { ok: false, message: describeIssues(result.error) };
}
