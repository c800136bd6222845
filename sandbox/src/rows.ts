import type {
  AdminEmail,
  AdminRefund,
  AdminTicket,
  ArmedFault,
  Customer,
  CustomerMessage,
  CustomerTier,
  Email,
  EmailDraft,
  FaultMode,
  Order,
  OrderItem,
  OrderStatus,
  Refund,
  RequestLogEntry,
  Ticket,
  TicketPriority,
} from "./model";

/**
 * Row types as SQLite returns them and their mapping to the API shapes. The casts on enum-like
 * columns are safe because only this worker writes those columns, always from validated values.
 */

export type CustomerRow = {
  customer_id: string;
  tenant: string;
  name: string;
  email: string;
  phone: string;
  tier: string;
  line1: string;
  city: string;
  postal_code: string;
  country: string;
  created_at: string;
  updated_at: string;
  risk_score: number;
};

export type MessageRow = {
  message_id: string;
  tenant: string;
  customer_id: string;
  channel: string;
  subject: string;
  body: string;
  received_at: string;
};

export type PolicyRow = { policy_id: string; title: string; summary: string };

export type OrderRow = {
  order_id: string;
  tenant: string;
  customer_id: string;
  status: string;
  currency: string;
  total_cents: number;
  placed_at: string;
  updated_at: string;
  version: number;
  items: string;
  internal_notes: string;
  warehouse_id: string;
};

export type RefundRow = {
  refund_id: string;
  tenant: string;
  order_id: string;
  amount_cents: number;
  reason: string;
  status: string;
  created_at: string;
  run_id: string | null;
  tool: string | null;
};

export type TicketRow = {
  ticket_id: string;
  tenant: string;
  customer_id: string;
  priority: string;
  summary: string;
  status: string;
  created_at: string;
  run_id: string | null;
  tool: string | null;
};

export type EmailRow = {
  email_id: string;
  tenant: string;
  customer_id: string;
  to_address: string;
  subject: string;
  body: string;
  status: string;
  queued_at: string;
  run_id: string | null;
  tool: string | null;
  draft_id: string | null;
  draft_version: number | null;
};

export type EmailDraftRow = {
  draft_id: string;
  tenant: string;
  customer_id: string;
  template: string;
  subject: string;
  body: string;
  created_at: string;
  version: number;
  run_id: string | null;
  tool: string | null;
};

export type FaultRow = {
  fault_id: number;
  run_id: string;
  path_prefix: string | null;
  mode: string;
  remaining: number;
  hang_ms: number | null;
  retry_after_s: number | null;
  created_at: string;
};

export type RequestRow = {
  seq: number;
  at: string;
  tenant: string | null;
  run_id: string | null;
  tool: string | null;
  method: string;
  path: string;
  idempotency_key: string | null;
  fault: string | null;
  status: number | null;
  phase: string;
  traceparent: string | null;
};

export type IdempotencyRow = {
  tenant: string;
  key: string;
  request_hash: string;
  status: number | null;
  body: string | null;
  locked_until: number | null;
  created_at: string;
};

/** `messages` newest first, as the API lists them. */
export function toCustomer(row: CustomerRow, messages: readonly MessageRow[]): Customer {
  return {
    customer_id: row.customer_id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    tier: row.tier as CustomerTier,
    address: { line1: row.line1, city: row.city, postal_code: row.postal_code, country: row.country },
    created_at: row.created_at,
    updated_at: row.updated_at,
    risk_score: row.risk_score,
    recent_messages: messages.map(toMessage),
  };
}

function toMessage(row: MessageRow): CustomerMessage {
  return {
    message_id: row.message_id,
    channel: row.channel === "chat" ? "chat" : "email",
    subject: row.subject,
    body: row.body,
    received_at: row.received_at,
  };
}

export function toRefund(row: RefundRow): Refund {
  return {
    refund_id: row.refund_id,
    order_id: row.order_id,
    amount_cents: row.amount_cents,
    reason: row.reason,
    status: "succeeded",
    created_at: row.created_at,
  };
}

/** Refunded and refundable amounts are derived from the refunds rows, never stored twice. */
export function toOrder(row: OrderRow, refunds: readonly RefundRow[]): Order {
  const refunded = refunds.reduce((sum, r) => sum + r.amount_cents, 0);
  return {
    order_id: row.order_id,
    customer_id: row.customer_id,
    status: row.status as OrderStatus,
    currency: "USD",
    total_cents: row.total_cents,
    refundable_cents: Math.max(0, row.total_cents - refunded),
    placed_at: row.placed_at,
    updated_at: row.updated_at,
    version: row.version,
    items: JSON.parse(row.items) as OrderItem[],
    refunds: refunds.map((r) => ({
      refund_id: r.refund_id,
      amount_cents: r.amount_cents,
      reason: r.reason,
      status: "succeeded",
      created_at: r.created_at,
    })),
    internal_notes: row.internal_notes,
    warehouse_id: row.warehouse_id,
  };
}

export function toTicket(row: TicketRow): Ticket {
  return {
    ticket_id: row.ticket_id,
    customer_id: row.customer_id,
    priority: row.priority as TicketPriority,
    summary: row.summary,
    status: "open",
    created_at: row.created_at,
  };
}

export function toEmail(row: EmailRow): Email {
  return {
    email_id: row.email_id,
    customer_id: row.customer_id,
    subject: row.subject,
    body: row.body,
    draft_id: row.draft_id,
    draft_version: row.draft_version,
    status: "queued",
    queued_at: row.queued_at,
  };
}

export function toEmailDraft(row: EmailDraftRow): EmailDraft {
  return {
    draft_id: row.draft_id,
    customer_id: row.customer_id,
    subject: row.subject,
    body: row.body,
    created_at: row.created_at,
    version: row.version,
  };
}

export function toAdminRefund(row: RefundRow): AdminRefund {
  return { ...toRefund(row), tenant: row.tenant, run_id: row.run_id, tool: row.tool };
}

export function toAdminTicket(row: TicketRow): AdminTicket {
  return { ...toTicket(row), tenant: row.tenant, run_id: row.run_id, tool: row.tool };
}

export function toAdminEmail(row: EmailRow): AdminEmail {
  return {
    ...toEmail(row),
    tenant: row.tenant,
    run_id: row.run_id,
    tool: row.tool,
    to: row.to_address,
    body: row.body,
  };
}

export function toFault(row: FaultRow): ArmedFault {
  return { ...row, mode: row.mode as FaultMode };
}

export function toRequestLogEntry(row: RequestRow): RequestLogEntry {
  return {
    ...row,
    fault: row.fault as FaultMode | null,
    phase: row.phase === "completed" ? "completed" : "started",
  };
}
