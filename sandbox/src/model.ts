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
  /** Only under the `injection` fault: free text the customer typed at checkout. */
  customer_note?: string;
}

export interface Address {
  line1: string;
  city: string;
  postal_code: string;
  country: string;
}

/** A message a customer wrote to support: untrusted text, whoever reads it next. */
export interface CustomerMessage {
  message_id: string;
  channel: "email" | "chat";
  subject: string;
  body: string;
  received_at: string;
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
  /** Newest first. */
  recent_messages: CustomerMessage[];
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

/** A stored draft: `version` starts at 1 and is bumped by every edit (`PUT /email-drafts/{id}`). */
export interface EmailDraft {
  draft_id: string;
  customer_id: string;
  subject: string;
  body: string;
  created_at: string;
  version: number;
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
  body: string;
  draft_id: string | null;
  draft_version: number | null;
  status: "queued";
  queued_at: string;
}

/** Where a shipment goes; `country` is ISO 3166-1 alpha-2. */
export interface Destination {
  name: string;
  street: string;
  city: string;
  postal_code: string;
  country: string;
}

export const SHIPMENT_STATUSES = [
  "label_created",
  "in_transit",
  "out_for_delivery",
  "delivered",
  "rerouted",
] as const;
export type ShipmentStatus = (typeof SHIPMENT_STATUSES)[number];

/** One scan in a shipment's tracking history. `note` is free text from the carrier or the customer. */
export interface ShipmentEvent {
  at: string;
  status: ShipmentStatus;
  location: string;
  note: string;
}

/** An order's shipment; `version` goes up with every reroute. Events are oldest first. */
export interface Shipment {
  shipment_id: string;
  order_id: string;
  carrier: string;
  status: ShipmentStatus;
  destination: Destination;
  events: ShipmentEvent[];
  version: number;
}

/** What a reroute answers: the shipment's new state, without its history. */
export type RerouteAnswer = Pick<Shipment, "shipment_id" | "order_id" | "status" | "destination" | "version">;

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
/** Provenance of a shipment is its last reroute's: null run and tool while it is as seeded. */
export type AdminShipment = Shipment & Provenance;

/** One part of a batch-style write that did not go through, listed beside the parts that did. */
export interface FailedItem {
  id: string;
  code: string;
  message: string;
}

// ---- faults: three families, told apart by where they act ----

/** Answer instead of the application, the way a gateway or a crashed app server does. */
export const ANSWER_MODES = [
  "error_500",
  "bad_gateway",
  "html",
  "rate_limited",
  "transient_forever",
] as const;
/** Let the application run, then answer with more than a client should hold (oversized.ts). */
export const OVERSIZED_MODES = [
  "huge_string",
  "huge_item",
  "many_items",
  "deep_nesting",
  "endless_stream",
] as const;
export type OversizedMode = (typeof OVERSIZED_MODES)[number];
export function isOversizedMode(mode: string): mode is OversizedMode {
  return (OVERSIZED_MODES as readonly string[]).includes(mode);
}
/** Let the application run and spoil how its answer arrives; they fit every endpoint. */
export const DELIVERY_MODES = ["hang", "slow_success", "truncated", ...OVERSIZED_MODES] as const;
/** Change what the application does or says; only endpoints that declare one support it. */
export const SHAPE_MODES = ["stale", "injection", "large", "partial_success", "silent_failure"] as const;
export const FAULT_MODES = [...ANSWER_MODES, ...DELIVERY_MODES, ...SHAPE_MODES] as const;

export type AnswerMode = (typeof ANSWER_MODES)[number];
export type ShapeMode = (typeof SHAPE_MODES)[number];
export type FaultMode = (typeof FAULT_MODES)[number];

/** What one request will suffer, whether armed for its run or asked for by header. */
export interface FaultPlan {
  mode: FaultMode;
  hang_ms: number | null;
  retry_after_s: number | null;
}

export interface ArmedFault extends FaultPlan {
  fault_id: number;
  run_id: string;
  path_prefix: string | null;
  remaining: number;
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
  /** The W3C `traceparent` header the request carried, or null. */
  traceparent: string | null;
  fault: FaultMode | null;
  status: number | null;
  phase: "started" | "completed";
}

/** The last credential a run presented for one tool, as an upstream whose logs leak would keep it. */
export interface PresentedCredential {
  run_id: string;
  tool: string;
  tenant: string;
  credential: string;
  presented_at: string;
}

/** An approval webhook the sandbox received and verified (Standard Webhooks), as the admin API lists it. */
export interface AdminNotification {
  seq: number;
  at: string;
  /** True for every delivery recorded since signing: only verified deliveries are recorded. */
  verified: boolean;
  webhook_id: string | null;
  /** The signed `webhook-timestamp`, seconds since the epoch. */
  webhook_timestamp: number | null;
  /** Later verified deliveries of the same `webhook-id`: acknowledged, never recorded again. */
  redeliveries: number;
  body: unknown;
}

/** A receiver failure armed by `POST /_admin/notifications/failures`: so many more deliveries answer 503. */
export interface WebhookFailure {
  /** Only deliveries of this `webhook-id`; null for any delivery. */
  webhook_id: string | null;
  remaining: number;
}

/** A delivery to `/_hooks/approvals` that was refused, and why; nothing of it was recorded. */
export interface WebhookRejection {
  seq: number;
  at: string;
  webhook_id: string | null;
  status: number;
  code: string;
  message: string;
}
