import type { Order, OrderItem, RefundPolicy } from "./model";
import { evalOrders } from "./seed-eval";

/**
 * The data every reset returns to. Two tenants with disjoint ids, so a test can prove a credential
 * for one never sees the other; PII and internal fields are filled in because masking and
 * stripping are only testable against data that has them.
 *
 * acme: orders A1001-A1005, customers C100-C105. globex: orders B2001-B2005, customers C200-C205.
 * initech, the load-test tenant: orders I3001-I3300 with large balances, customers C300-C305.
 * hooli, the fleet tenant: orders H0001-H0200 of 120.00 each, customers C500-C509.
 * wayne, whose runs act for users: orders W0001-W0040 of 500.00 each, customers C700-C709; W0031-W0035
 * are alice's and W0036-W0040 bob's (only a credential acting for that user may refund them).
 * umbrella, the rate-limit tenant: customer C401 only.
 * The evaluation's own orders (A1101+, B2101+ and their lanes: seed-eval.ts) are no one else's.
 * Orders with a refund already: A1003, A1005 (cancelled, fully refunded), B2001, B2004 (cancelled,
 * fully refunded). Totals are always the sum of the items.
 */

export interface SeedOrder extends Omit<Order, "total_cents" | "refundable_cents" | "refunds"> {
  tenant: string;
  /** The user (`sub` at the tenant's identity provider) whose order it is; only their credential may refund it. */
  owner?: string;
  refunds: { refund_id: string; amount_cents: number; reason: string; created_at: string }[];
}

function item(sku: string, name: string, quantity: number, unit_price_cents: number): OrderItem {
  return { sku, name, quantity, unit_price_cents };
}

/**
 * How many orders initech has (I3001 onward): enough that a benchmark's reads can name more
 * distinct requests than the proxy keeps signed upstream credentials for, so each read signs its
 * own, as a production read of a new request does (`bench/workload.mjs`, READ_ORDERS).
 */
export const LOAD_TEST_ORDERS = 300;

export const SEED_ORDERS: readonly SeedOrder[] = [
  {
    tenant: "acme",
    order_id: "A1001",
    customer_id: "C100",
    status: "delivered",
    currency: "USD",
    placed_at: "2026-03-02T14:21:09.000Z",
    updated_at: "2026-03-06T17:40:12.000Z",
    version: 1,
    items: [
      item("HP-WL-200", "Wireless Headphones", 1, 12999),
      item("CB-USBC-2M", "USB-C Cable 2m", 2, 1299),
    ],
    refunds: [],
    internal_notes: "Customer asked about warranty extension; offered 10% code VIP10 by phone.",
    warehouse_id: "wh-sfo-2",
  },
  {
    tenant: "acme",
    order_id: "A1002",
    customer_id: "C101",
    status: "shipped",
    currency: "USD",
    placed_at: "2026-04-11T09:05:44.000Z",
    updated_at: "2026-04-13T11:02:31.000Z",
    version: 1,
    items: [item("CH-ERGO-01", "Ergonomic Office Chair", 1, 24900)],
    refunds: [],
    internal_notes: "Carrier reported address issue; do not promise delivery date.",
    warehouse_id: "wh-bos-1",
  },
  {
    tenant: "acme",
    order_id: "A1003",
    customer_id: "C102",
    status: "delivered",
    currency: "USD",
    placed_at: "2026-02-18T19:47:03.000Z",
    updated_at: "2026-03-01T15:12:47.000Z",
    version: 2,
    items: [
      item("EM-PRO-X", "Espresso Machine Pro X", 1, 34900),
      item("CF-BEAN-1KG", "Coffee Beans 1kg", 2, 2450),
      item("MF-STEAM-3", "Milk Frother", 1, 3999),
    ],
    refunds: [
      {
        refund_id: "re_7Kp2QxW9sLm4Tb",
        amount_cents: 3999,
        reason: "Milk frother arrived damaged",
        created_at: "2026-03-01T15:12:47.000Z",
      },
    ],
    internal_notes: "Platinum customer, fraud check passed manually by J. Ortiz (case FR-2291).",
    warehouse_id: "wh-sea-1",
  },
  {
    tenant: "acme",
    order_id: "A1004",
    customer_id: "C100",
    status: "processing",
    currency: "USD",
    placed_at: "2026-04-19T08:12:55.000Z",
    updated_at: "2026-04-19T08:12:55.000Z",
    version: 1,
    items: [item("DK-STAND-160", "Standing Desk 160cm", 1, 45900)],
    refunds: [],
    internal_notes: "Backordered until next week; supplier PO 88213.",
    warehouse_id: "wh-sfo-2",
  },
  {
    tenant: "acme",
    order_id: "A1005",
    customer_id: "C103",
    status: "cancelled",
    currency: "USD",
    placed_at: "2026-03-27T21:33:18.000Z",
    updated_at: "2026-03-28T09:01:02.000Z",
    version: 2,
    items: [item("SW-FIT-4", "Smart Watch Fit 4", 1, 19900), item("SW-STRAP-M", "Sport Strap M", 1, 2900)],
    refunds: [
      {
        refund_id: "re_9Vn3HdR1cZa8Ye",
        amount_cents: 22800,
        reason: "Order cancelled before shipment",
        created_at: "2026-03-28T09:01:02.000Z",
      },
    ],
    internal_notes: "Cancelled by customer; card ending 4242 flagged for chargeback history.",
    warehouse_id: "wh-chi-3",
  },
  {
    tenant: "globex",
    order_id: "B2001",
    customer_id: "C200",
    status: "delivered",
    currency: "USD",
    placed_at: "2026-01-30T16:45:00.000Z",
    updated_at: "2026-02-12T10:20:41.000Z",
    version: 2,
    items: [
      item("LS-ALU-2", "Aluminium Laptop Stand", 2, 4999),
      item("MN-27-4K", '27" 4K Monitor', 1, 32900),
    ],
    refunds: [
      {
        refund_id: "re_2Fh8JmT5qWe1Ro",
        amount_cents: 4999,
        reason: "One laptop stand returned unused",
        created_at: "2026-02-12T10:20:41.000Z",
      },
    ],
    internal_notes: "Key account; route escalations to account manager D. Park.",
    warehouse_id: "wh-pdx-1",
  },
  {
    tenant: "globex",
    order_id: "B2002",
    customer_id: "C201",
    status: "processing",
    currency: "USD",
    placed_at: "2026-04-18T13:09:27.000Z",
    updated_at: "2026-04-18T13:09:27.000Z",
    version: 1,
    items: [item("KB-MECH-87", "Mechanical Keyboard TKL", 1, 14900)],
    refunds: [],
    internal_notes: "Payment captured after 3DS retry.",
    warehouse_id: "wh-sjc-2",
  },
  {
    tenant: "globex",
    order_id: "B2003",
    customer_id: "C202",
    status: "shipped",
    currency: "USD",
    placed_at: "2026-04-08T22:14:51.000Z",
    updated_at: "2026-04-10T07:55:19.000Z",
    version: 1,
    items: [
      item("HS-ANC-900", "Noise-Cancelling Headset", 1, 21900),
      item("WC-HD-1080", "HD Webcam", 1, 8900),
    ],
    refunds: [],
    internal_notes: "International shipment, customs declaration CD-55102.",
    warehouse_id: "wh-mia-1",
  },
  {
    tenant: "globex",
    order_id: "B2004",
    customer_id: "C203",
    status: "cancelled",
    currency: "USD",
    placed_at: "2026-03-15T11:28:36.000Z",
    updated_at: "2026-03-15T18:03:10.000Z",
    version: 2,
    items: [item("LP-DESK-LED", "LED Desk Lamp", 2, 3450)],
    refunds: [
      {
        refund_id: "re_5Tq1LsN7dXb3Gu",
        amount_cents: 6900,
        reason: "Order cancelled before shipment",
        created_at: "2026-03-15T18:03:10.000Z",
      },
    ],
    internal_notes: "Duplicate order; customer placed it twice.",
    warehouse_id: "wh-den-1",
  },
  {
    tenant: "globex",
    order_id: "B2005",
    customer_id: "C200",
    status: "delivered",
    currency: "USD",
    placed_at: "2026-03-03T09:00:12.000Z",
    updated_at: "2026-03-07T14:36:58.000Z",
    version: 1,
    items: [
      item("PP-A4-500", "Printer Paper A4 (500 sheets)", 5, 899),
      item("TN-BLK-XL", "Toner Cartridge XL", 1, 8900),
    ],
    refunds: [],
    internal_notes: "Recurring office supply order; net-30 invoice terms.",
    warehouse_id: "wh-pdx-1",
  },
  ...loadTestOrders(),
  ...fleetOrders(),
  ...evalOrders(),
  ...userOrders(),
];

/** Bulk orders for benchmarks and concurrency tests: enough balance for thousands of small refunds. */
function loadTestOrders(): SeedOrder[] {
  return Array.from({ length: LOAD_TEST_ORDERS }, (_, index) => ({
    tenant: "initech",
    order_id: `I${3001 + index}`,
    customer_id: `C30${index % 6}`,
    status: "delivered" as const,
    currency: "USD",
    placed_at: "2026-01-05T08:00:00.000Z",
    updated_at: "2026-01-09T08:00:00.000Z",
    version: 1,
    items: [item("TPS-COVER-100", "TPS Report Cover Sheets (case)", 100, 10000)],
    refunds: [],
    internal_notes: "Bulk account; invoiced quarterly.",
    warehouse_id: "wh-aus-1",
  }));
}

/** `count` delivered orders of one tenant, numbered from 1 after `prefix`, alike but for `extra`. */
function bulkOrders(
  shape: { tenant: string; prefix: string; customers: string; item: SeedOrder["items"][number] },
  rest: Pick<SeedOrder, "internal_notes" | "warehouse_id">,
  count: number,
  extra: (index: number) => Partial<SeedOrder> = () => ({}),
): SeedOrder[] {
  return Array.from({ length: count }, (_, index) => ({
    tenant: shape.tenant,
    order_id: `${shape.prefix}${String(index + 1).padStart(4, "0")}`,
    customer_id: `${shape.customers}${index % 10}`,
    status: "delivered" as const,
    currency: "USD",
    placed_at: "2026-02-02T08:00:00.000Z",
    updated_at: "2026-02-06T08:00:00.000Z",
    version: 1,
    items: [shape.item],
    refunds: [],
    ...rest,
    ...extra(index),
  }));
}

/**
 * Orders for fleet-scale tests of effects across runs: many runs, each refunding its own orders,
 * every order refundable far above the tenant's auto-approval limit (1000 cents).
 */
function fleetOrders(): SeedOrder[] {
  return bulkOrders(
    {
      tenant: "hooli",
      prefix: "H",
      customers: "C50",
      item: item("PP-CASE-12", "Pied Piper Server Case", 1, 12000),
    },
    { internal_notes: "Fleet account; refunds reconciled monthly.", warehouse_id: "wh-sjc-1" },
    200,
  );
}

/**
 * Orders of wayne, whose runs act for its users: W0001-W0040, each refundable up to 500.00;
 * W0031-W0035 belong to alice and W0036-W0040 to bob.
 */
function userOrders(): SeedOrder[] {
  return bulkOrders(
    { tenant: "wayne", prefix: "W", customers: "C70", item: item("BAT-CAPE-01", "Utility Cape", 1, 50000) },
    { internal_notes: "Household account.", warehouse_id: "wh-gtm-1" },
    40,
    (index) => (index >= 30 ? { owner: index >= 35 ? "bob" : "alice" } : {}),
  );
}

/** Shared by every tenant: policies are company-wide documents, not customer data. */
export const SEED_POLICIES: readonly RefundPolicy[] = [
  {
    policy_id: "pol_standard_refund",
    title: "Standard refund window",
    summary:
      "Unused items can be returned for a full refund within 30 days of delivery. Refunds go back to the original payment method within 5-10 business days.",
  },
  {
    policy_id: "pol_damaged_items",
    title: "Damaged or defective items",
    summary:
      "Items that arrive damaged or defective qualify for a full refund or a free replacement. No return shipping is charged; a photo of the damage may be requested.",
  },
  {
    policy_id: "pol_partial_refunds",
    title: "Partial refunds",
    summary:
      "Agents may issue a partial refund for missing accessories, cosmetic defects or price adjustments, up to the order's refundable balance.",
  },
  {
    policy_id: "pol_cancellations",
    title: "Order cancellations",
    summary:
      "Orders can be cancelled free of charge until they ship. Cancelled orders are refunded automatically and cannot be refunded again.",
  },
  {
    policy_id: "pol_late_delivery",
    title: "Late delivery compensation",
    summary:
      "When a shipment arrives more than 5 business days late, the customer may receive a shipping refund or store credit of up to 15% of the order total.",
  },
  {
    policy_id: "pol_final_sale",
    title: "Final sale, gift cards and digital goods",
    summary:
      "Gift cards, downloaded software and items marked final sale are not eligible for a refund, except where required by law.",
  },
];
