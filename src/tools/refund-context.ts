import type { DecisionContext, DecisionFact } from "../catalog/define-tool";
import { formatMoney } from "../core/money";

interface RefundArgs {
  order_id: string;
  amount_cents: number;
}

interface ObservedOrder {
  status?: string;
  currency?: string;
  total_cents?: number;
  refundable_cents?: number;
  customer_id?: string;
  refunds?: Array<{ amount_cents?: number }>;
}

/**
 * What an operator weighs before approving a refund: the order as it is now (its total, the
 * refunds already issued and what is still refundable), read fresh with `lookup_order`, and the
 * requested amount in the order's currency, flagged when it exceeds what is left.
 */
export const refundDecisionContext: DecisionContext<RefundArgs> = {
  tool: "lookup_order",
  args: (args) => ({ order_id: args.order_id }),
  facts: (args, observed) => {
    const order = (observed ?? {}) as ObservedOrder;
    const currency = typeof order.currency === "string" ? order.currency : "USD";
    const money = (cents: number) => formatMoney(cents, currency);
    const refunds = Array.isArray(order.refunds) ? order.refunds : [];
    const refunded = refunds.reduce((sum, refund) => sum + (refund.amount_cents ?? 0), 0);
    const refundable = typeof order.refundable_cents === "number" ? order.refundable_cents : null;
    const facts: DecisionFact[] = [
      {
        label: "This refund",
        value: money(args.amount_cents),
        ...(refundable !== null && args.amount_cents > refundable
          ? {
              warning: `More than the ${money(refundable)} still refundable: the payments API will refuse it.`,
            }
          : {}),
      },
    ];
    if (typeof order.total_cents === "number")
      facts.push({ label: "Order total", value: money(order.total_cents) });
    facts.push({
      label: "Refunds already issued",
      value: refunds.length === 0 ? "none" : `${refunds.length} · ${money(refunded)}`,
    });
    if (refundable !== null) facts.push({ label: "Still refundable", value: money(refundable) });
    if (typeof order.status === "string") {
      facts.push({
        label: "Order status",
        value: order.status,
        ...(order.status === "cancelled" ? { warning: "The order is cancelled." } : {}),
      });
    }
    if (typeof order.customer_id === "string") facts.push({ label: "Customer", value: order.customer_id });
    return facts;
  },
};
