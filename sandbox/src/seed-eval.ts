import type { OrderItem } from "./model";
import type { SeedOrder } from "./seed";
import type { SeedCustomer } from "./seed-customers";

/**
 * The evaluation's own data (`npm run eval`, eval/cases/): orders and customers no test, demo or
 * other case touches, so that no guard across runs (one business effect per order, or per customer
 * and summary, within a day) holds one case's write for a human because another run wrote first.
 *
 * Each case names its ids in lane 0: acme orders A1101–A1199, globex orders B2101–B2199, acme
 * customers C110–C119, globex customers C210–C219. Every agent of one evaluation works in a lane
 * of its own, the same data under other ids: lane `n` puts `n + 1` in the id's third character
 * (B2101 → B2301 in lane 2, C114 → C134), so lanes never share an order or a customer either.
 */

/** How many lanes are seeded: agents evaluated side by side on one sandbox, or evaluations in turn. */
export const EVAL_LANES = 8;

/** The ids of the evaluation's data, lane 0, each with the lane digit (1) in its third character. */
const ORDER_ID = /^(A1|B2)1(\d{2})$/;
const CUSTOMER_ID = /^(C1|C2)1(\d)$/;
/** Where such ids stand in free text (a prompt, a summary): whole words only. */
const IN_TEXT = /\b(?:(A1|B2)1(\d{2})|(C1|C2)1(\d))\b/g;

/** Whether an id belongs to the evaluation's data of lane 0. */
export function isEvalId(id: string): boolean {
  return ORDER_ID.test(id) || CUSTOMER_ID.test(id);
}

/** The lane of an id of the evaluation's data, in any lane; null for any other id. */
export function laneOf(id: string): number | null {
  const match = /^(?:A1|B2|C1|C2)(\d)(?:\d{2}|\d)$/.exec(id);
  const order = /^(A1|B2)\d{3}$/.test(id);
  const customer = /^C[12]\d{2}$/.test(id);
  if (!match?.[1] || !(order || customer)) return null;
  const lane = Number(match[1]) - 1;
  return lane >= 0 && lane < EVAL_LANES ? lane : null;
}

/** Every id of lane 0's data in `text` moved into `lane`; other text, seed ids included, is left as is. */
export function inLane(text: string, lane: number): string {
  if (!Number.isInteger(lane) || lane < 0 || lane >= EVAL_LANES) {
    throw new Error(`lane ${lane} is not one of the ${EVAL_LANES} the sandbox seeds (0–${EVAL_LANES - 1})`);
  }
  return text.replace(
    IN_TEXT,
    (_, orderPrefix?: string, orderRest?: string, customerPrefix?: string, customerRest?: string) =>
      orderPrefix ? `${orderPrefix}${lane + 1}${orderRest}` : `${customerPrefix}${lane + 1}${customerRest}`,
  );
}

const item = (sku: string, name: string, quantity: number, unit_price_cents: number): OrderItem => ({
  sku,
  name,
  quantity,
  unit_price_cents,
});

/** An order with room for every refund a case asks for: shipped, 300.00 USD, none refunded yet. */
function open(tenant: string, order_id: string, customer_id: string): SeedOrder {
  return {
    tenant,
    order_id,
    customer_id,
    status: "shipped",
    currency: "USD",
    placed_at: "2026-04-02T10:00:00.000Z",
    updated_at: "2026-04-04T09:30:00.000Z",
    version: 1,
    items: [item("EV-DOCK-4K", "4K Docking Station", 1, 24900), item("EV-HUB-7", "7-Port USB Hub", 2, 2550)],
    refunds: [],
    internal_notes: "Evaluation order: one case's own.",
    warehouse_id: "wh-pdx-1",
  };
}

/** An order cancelled and fully refunded before shipment: the payments API refuses any refund of it. */
function cancelled(tenant: string, order_id: string, customer_id: string): SeedOrder {
  return {
    ...open(tenant, order_id, customer_id),
    status: "cancelled",
    version: 2,
    items: [item("EV-LAMP-2", "LED Desk Lamp", 2, 3450)],
    refunds: [
      {
        refund_id: `re_eval_${order_id}`,
        amount_cents: 6900,
        reason: "Order cancelled before shipment",
        created_at: "2026-04-04T09:30:00.000Z",
      },
    ],
  };
}

/** What an order of lane 0 is: open for refunds, or cancelled (globex's B2108). */
interface OrderSpec {
  tenant: string;
  order_id: string;
  customer_id: string;
  cancelled?: boolean;
}

/** Lane 0: acme's two refund orders, globex's refund orders, and the customers tickets are for. */
const LANE_ORDERS: readonly OrderSpec[] = [
  { tenant: "acme", order_id: "A1101", customer_id: "C100" },
  { tenant: "acme", order_id: "A1102", customer_id: "C102" },
  ...Array.from({ length: 23 }, (_, index): OrderSpec => {
    const order_id = `B21${String(index + 1).padStart(2, "0")}`;
    return order_id === "B2108"
      ? { tenant: "globex", order_id, customer_id: "C203", cancelled: true }
      : { tenant: "globex", order_id, customer_id: "C201" };
  }),
];

const LANE_CUSTOMERS: ReadonlyArray<[tenant: string, customer_id: string]> = [
  ...Array.from({ length: 10 }, (_, index): [string, string] => ["acme", `C11${index}`]),
  ["globex", "C210"],
];

function evalCustomer(tenant: string, customer_id: string): SeedCustomer {
  const n = customer_id.slice(1);
  return {
    tenant,
    customer_id,
    name: `Evaluation Customer ${n}`,
    email: `customer${n}@eval.example`,
    phone: `+1555010${n}`,
    tier: "standard",
    address: { line1: `${n} Test Lane`, city: "Springfield", postal_code: "62701", country: "US" },
    created_at: "2025-01-15T10:15:00.000Z",
    updated_at: "2026-02-15T08:30:00.000Z",
    risk_score: 0.1,
  };
}

/** Every lane's orders. */
export function evalOrders(): SeedOrder[] {
  return lanes().flatMap((lane) =>
    LANE_ORDERS.map((spec) => {
      const id = inLane(spec.order_id, lane);
      return spec.cancelled
        ? cancelled(spec.tenant, id, spec.customer_id)
        : open(spec.tenant, id, spec.customer_id);
    }),
  );
}

/** Every lane's customers. */
export function evalCustomers(): SeedCustomer[] {
  return lanes().flatMap((lane) =>
    LANE_CUSTOMERS.map(([tenant, id]) => evalCustomer(tenant, inLane(id, lane))),
  );
}

const lanes = () => Array.from({ length: EVAL_LANES }, (_, lane) => lane);
