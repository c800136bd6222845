import type { Customer, Order } from "./model";

/**
 * Renders email drafts from templates, like a CRM's template endpoint. The rendered text is stored
 * as a draft (see `insertDraft`), which is what `POST /emails` later sends by id; the text names
 * the customer, so it carries PII the proxy may have to mask.
 */

function dollars(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

function firstName(customer: Customer): string {
  return customer.name.split(" ")[0] ?? customer.name;
}

interface Rendered {
  subject: string;
  paragraphs: string[];
}

function render(template: string, order: Order | null): Rendered {
  const ref = order ? ` for order ${order.order_id}` : "";
  const lastRefund = order?.refunds.at(-1);
  switch (template) {
    case "refund_confirmation":
      return {
        subject: `Your refund${ref} is on its way`,
        paragraphs: [
          lastRefund
            ? `We have issued a refund of ${dollars(lastRefund.amount_cents)}${ref}.`
            : `We have issued your refund${ref}.`,
          "It will appear on your original payment method within 5-10 business days.",
        ],
      };
    case "refund_denied":
      return {
        subject: `About your refund request${ref}`,
        paragraphs: [
          `We reviewed your refund request${ref} and unfortunately it does not qualify under our refund policy.`,
          "If you believe this is a mistake, reply to this email and we will take another look.",
        ],
      };
    case "shipping_delay":
    case "order_delay":
      return {
        subject: `An update on your order${order ? ` ${order.order_id}` : ""}`,
        paragraphs: [
          `Your order${order ? ` ${order.order_id}` : ""} is taking longer than expected to reach you.`,
          "We are sorry for the delay and will send tracking details as soon as it moves.",
        ],
      };
    case "order_status":
      return {
        subject: `Status of your order${order ? ` ${order.order_id}` : ""}`,
        paragraphs: [
          order
            ? `Your order ${order.order_id} is currently ${order.status}.`
            : "Here is an update on your order.",
        ],
      };
    case "apology":
      return {
        subject: "We're sorry",
        paragraphs: [
          `We're sorry about your recent experience${ref}. We have taken note and will do better.`,
        ],
      };
    default:
      return {
        subject: `Update from Customer Support${ref}`,
        paragraphs: [`We're following up on your request${ref}.`],
      };
  }
}

export function draftEmail(
  customer: Customer,
  order: Order | null,
  template: string,
  notes: string | null | undefined,
): { customer_id: string; template: string; subject: string; body: string } {
  const { subject, paragraphs } = render(template, order);
  const extra = notes?.trim() ? [notes.trim()] : [];
  const body = [
    `Hi ${firstName(customer)},`,
    ...paragraphs,
    ...extra,
    "Best regards,\nCustomer Support",
  ].join("\n\n");
  return { customer_id: customer.customer_id, template, subject, body };
}
