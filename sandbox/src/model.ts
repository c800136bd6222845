/**
 * Resource shapes the sandbox serves. They mirror what the production support, payments, CRM and
 * email APIs return, internal fields included: stripping those is the proxy's job, so the sandbox
 * must hand them out exactly like a careless real upstream would.
 */

export type OrderStatus = "processing" | "shipped" | "delivered" | "cancelled";
export type CustomerTier = "standard" | "gold" | "platinum";

export interface OrderItem {
  sku: string;
  name: string;
  quantity: number;
  unit_price_cents: number;
}

export interface Refund {
  refund_id: string;
  order_id: string;
  amount_cents: number;
  reason: string;
  status: "succeeded";
  created_at: string;
}

export interface Order {
  order_id: string;
  customer_id: string;
  status: OrderStatus;
  currency: "USD";
  total_cents: number;
  refundable_cents: number;
  placed_at: string;
  updated_at: string;
  version: number;
  items: OrderItem[];
  refunds: Omit<Refund, "order_id">[];
  internal_notes: string;
  warehouse_id: string;
}

export interface Address {
  line1: string;
  city: string;
  postal_code: string;
  country: string;
}

export interface Customer {
  customer_id: string;
  name: string;
  email: string;
  phone: string;
  tier: CustomerTier;
  address: Address;
  created_at: string;
  updated_at: string;
  risk_score: number;
}

export interface RefundPolicy {
  policy_id: string;
  title: string;
  summary: string;
}

export interface PolicySearchResult {
  results: RefundPolicy[];
  total: number;
}

export interface EmailDraft {
  customer_id: string;
  template: string;
  subject: string;
  body: string;
}

export type TicketPriority = "low" | "normal" | "medium" | "high" | "urgent";

export interface Ticket {
  ticket_id: string;
  customer_id: string;
  priority: TicketPriority;
  summary: string;
  status: "open";
  created_at: string;
}

export interface Email {
  email_id: string;
  customer_id: string;
  subject: string;
  status: "queued";
  queued_at: string;
}

export interface ErrorBody {
  error: { code: string; message: string };
}

/** The outcome of one business operation: what the HTTP layer sends back (and idempotency stores). */
export type Outcome<T> = { status: number; body: T } | { status: number; body: ErrorBody };

export function failure(status: number, code: string, message: string): { status: number; body: ErrorBody } {
  return { status, body: { error: { code, message } } };
}

// ---- admin views: who did what, across tenants ----

/** Who caused a write; seed rows have no run, which is how tests tell them from agent writes. */
export interface Provenance {
  tenant: string;
  run_id: string | null;
  tool: string | null;
}

export type AdminRefund = Refund & Provenance;
export type AdminTicket = Ticket & Provenance;
export type AdminEmail = Email & Provenance & { to: string; body: string };

export type FaultMode = "hang" | "error_500" | "bad_gateway" | "html" | "rate_limited";

export interface ArmedFault {
  fault_id: number;
  run_id: string;
  path_prefix: string | null;
  mode: FaultMode;
  remaining: number;
  hang_ms: number | null;
  retry_after_s: number | null;
  created_at: string;
}

export interface RequestLogEntry {
  seq: number;
  at: string;
  tenant: string | null;
  run_id: string | null;
  tool: string | null;
  method: string;
  path: string;
  idempotency_key: string | null;
  fault: FaultMode | null;
  status: number | null;
  phase: "started" | "completed";
}
