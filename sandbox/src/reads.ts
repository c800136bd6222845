import type { Customer, Order, Ticket } from "./model";
import {
  type CustomerRow,
  type MessageRow,
  type OrderRow,
  type RefundRow,
  type TicketRow,
  toCustomer,
  toOrder,
  toTicket,
} from "./rows";

/** Business reads, each scoped to the caller's tenant. Writes reuse them for their checks. */

/** How many messages a customer record shows; older ones stay in the inbox, not in the record. */
const RECENT_MESSAGES = 5;

export function readOrder(sql: SqlStorage, tenant: string, orderId: string): Order | null {
  const row = sql
    .exec<OrderRow>("SELECT * FROM orders WHERE tenant = ? AND order_id = ?", tenant, orderId)
    .toArray()[0];
  if (!row) return null;
  const order = toOrder(row, refundsOf(sql, tenant, orderId));
  const note = sql
    .exec<{ note: string }>("SELECT note FROM order_notes WHERE tenant = ? AND order_id = ?", tenant, orderId)
    .toArray()[0];
  return note ? { ...order, customer_note: note.note } : order;
}

/** Leaves the customer's note on an order of the tenant; false when the tenant has no such order. */
export function writeOrderNote(sql: SqlStorage, tenant: string, orderId: string, note: string): boolean {
  if (!readOrder(sql, tenant, orderId)) return false;
  sql.exec(
    `INSERT INTO order_notes (tenant, order_id, note) VALUES (?, ?, ?)
     ON CONFLICT (tenant, order_id) DO UPDATE SET note = excluded.note`,
    tenant,
    orderId,
    note,
  );
  return true;
}

/** Whether the tenant has this customer, without reading the customer's messages. */
export function hasCustomer(sql: SqlStorage, tenant: string, customerId: string): boolean {
  return (
    sql.exec("SELECT 1 FROM customers WHERE tenant = ? AND customer_id = ?", tenant, customerId).toArray()
      .length > 0
  );
}

export function readCustomer(sql: SqlStorage, tenant: string, customerId: string): Customer | null {
  const row = sql
    .exec<CustomerRow>("SELECT * FROM customers WHERE tenant = ? AND customer_id = ?", tenant, customerId)
    .toArray()[0];
  if (!row) return null;
  const messages = sql
    .exec<MessageRow>(
      `SELECT * FROM customer_messages WHERE tenant = ? AND customer_id = ?
        ORDER BY received_at DESC, message_id DESC LIMIT ?`,
      tenant,
      customerId,
      RECENT_MESSAGES,
    )
    .toArray();
  return toCustomer(row, messages);
}

/** One ticket of the tenant's own; another tenant's ticket is as absent as one never created. */
export function readTicket(sql: SqlStorage, tenant: string, ticketId: string): Ticket | null {
  const row = sql
    .exec<TicketRow>("SELECT * FROM tickets WHERE tenant = ? AND ticket_id = ?", tenant, ticketId)
    .toArray()[0];
  return row ? toTicket(row) : null;
}

function refundsOf(sql: SqlStorage, tenant: string, orderId: string): RefundRow[] {
  return sql
    .exec<RefundRow>(
      "SELECT * FROM refunds WHERE tenant = ? AND order_id = ? ORDER BY rowid",
      tenant,
      orderId,
    )
    .toArray();
}
