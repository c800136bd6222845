import { newId, nowIso } from "./ids";
import { type Email, failure, type Outcome, type Refund, type Ticket, type TicketPriority } from "./model";
import { readCustomer, readOrder } from "./reads";
import { type EmailRow, type RefundRow, type TicketRow, toEmail, toRefund, toTicket } from "./rows";
import type { Caller } from "./store";

/**
 * Business writes as plain SQL against one store. The store runs each inside a transaction, which
 * is what lets it roll one back after the fact for `silent_failure`.
 */

export function insertRefund(
  sql: SqlStorage,
  caller: Caller,
  input: { order_id: string; amount_cents: number; reason: string },
): Outcome<Refund> {
  const order = readOrder(sql, caller.tenant, input.order_id);
  if (!order) return failure(404, "not_found", `No order with id '${input.order_id}'.`);
  if (order.status === "cancelled") {
    return failure(
      422,
      "order_not_refundable",
      `Order ${order.order_id} is cancelled and cannot be refunded.`,
    );
  }
  if (input.amount_cents > order.refundable_cents) {
    return failure(
      422,
      "amount_exceeds_refundable",
      `Refund of ${input.amount_cents} cents exceeds the refundable amount of ${order.refundable_cents} cents for order ${order.order_id}.`,
    );
  }
  const now = nowIso();
  const row = sql
    .exec<RefundRow>(
      `INSERT INTO refunds (refund_id, tenant, order_id, amount_cents, reason, status, created_at, run_id, tool)
        VALUES (?, ?, ?, ?, ?, 'succeeded', ?, ?, ?) RETURNING *`,
      newId("re"),
      caller.tenant,
      order.order_id,
      input.amount_cents,
      input.reason,
      now,
      caller.run_id,
      caller.tool,
    )
    .one();
  sql.exec(
    "UPDATE orders SET version = version + 1, updated_at = ? WHERE tenant = ? AND order_id = ?",
    now,
    caller.tenant,
    order.order_id,
  );
  return { status: 201, body: toRefund(row) };
}

export function insertTicket(
  sql: SqlStorage,
  caller: Caller,
  input: { customer_id: string; priority: TicketPriority; summary: string },
): Outcome<Ticket> {
  if (!readCustomer(sql, caller.tenant, input.customer_id)) {
    return failure(404, "not_found", `No customer with id '${input.customer_id}'.`);
  }
  const row = sql
    .exec<TicketRow>(
      `INSERT INTO tickets (ticket_id, tenant, customer_id, priority, summary, status, created_at, run_id, tool)
        VALUES (?, ?, ?, ?, ?, 'open', ?, ?, ?) RETURNING *`,
      newId("tk"),
      caller.tenant,
      input.customer_id,
      input.priority,
      input.summary,
      nowIso(),
      caller.run_id,
      caller.tool,
    )
    .one();
  return { status: 201, body: toTicket(row) };
}

export function insertEmail(
  sql: SqlStorage,
  caller: Caller,
  input: { customer_id: string; subject: string; body: string },
): Outcome<Email> {
  const customer = readCustomer(sql, caller.tenant, input.customer_id);
  if (!customer) return failure(404, "not_found", `No customer with id '${input.customer_id}'.`);
  const row = sql
    .exec<EmailRow>(
      `INSERT INTO emails (email_id, tenant, customer_id, to_address, subject, body, status, queued_at, run_id, tool)
        VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?) RETURNING *`,
      newId("em"),
      caller.tenant,
      customer.customer_id,
      customer.email,
      input.subject,
      input.body,
      nowIso(),
      caller.run_id,
      caller.tool,
    )
    .one();
  return { status: 202, body: toEmail(row) };
}
