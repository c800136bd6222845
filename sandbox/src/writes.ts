import { newId, nowIso } from "./ids";
import {
  type Email,
  type EmailDraft,
  failure,
  type Outcome,
  type Refund,
  type Ticket,
  type TicketPriority,
} from "./model";
import { hasCustomer, readCustomer, readOrder } from "./reads";
import {
  type EmailDraftRow,
  type EmailRow,
  type RefundRow,
  type TicketRow,
  toEmail,
  toEmailDraft,
  toRefund,
  toTicket,
} from "./rows";
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
  const owner = orderOwner(sql, caller.tenant, order.order_id);
  if (owner !== null && caller.user !== owner) {
    return failure(
      403,
      "not_the_users_order",
      `Order ${order.order_id} is not ${caller.user ? `${caller.user}'s` : "the order of a user the credential names"}: only its owner may have it refunded.`,
    );
  }
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

/** The user an order belongs to, or null when it is anyone's of the tenant. */
function orderOwner(sql: SqlStorage, tenant: string, orderId: string): string | null {
  return (
    sql
      .exec<{ owner: string }>(
        "SELECT owner FROM order_owners WHERE tenant = ? AND order_id = ?",
        tenant,
        orderId,
      )
      .toArray()[0]?.owner ?? null
  );
}

export function insertTicket(
  sql: SqlStorage,
  caller: Caller,
  input: { customer_id: string; priority: TicketPriority; summary: string },
): Outcome<Ticket> {
  if (!hasCustomer(sql, caller.tenant, input.customer_id)) {
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

export function readDraft(sql: SqlStorage, tenant: string, draftId: string): EmailDraft | null {
  const row = sql
    .exec<EmailDraftRow>("SELECT * FROM email_drafts WHERE tenant = ? AND draft_id = ?", tenant, draftId)
    .toArray()[0];
  return row ? toEmailDraft(row) : null;
}

export function readEmail(sql: SqlStorage, tenant: string, emailId: string): Email | null {
  const row = sql
    .exec<EmailRow>("SELECT * FROM emails WHERE tenant = ? AND email_id = ?", tenant, emailId)
    .toArray()[0];
  return row ? toEmail(row) : null;
}

export function listDrafts(sql: SqlStorage, tenant: string | null): EmailDraft[] {
  return sql
    .exec<EmailDraftRow>("SELECT * FROM email_drafts WHERE ?1 IS NULL OR tenant = ?1 ORDER BY rowid", tenant)
    .toArray()
    .map(toEmailDraft);
}

/** Stores a rendered draft at version 1. Nothing is sent. */
export function insertDraft(
  sql: SqlStorage,
  caller: Caller,
  input: { customer_id: string; template: string; subject: string; body: string },
): Outcome<EmailDraft> {
  const row = sql
    .exec<EmailDraftRow>(
      `INSERT INTO email_drafts (draft_id, tenant, customer_id, template, subject, body, created_at, version, run_id, tool)
        VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?) RETURNING *`,
      newId("dr"),
      caller.tenant,
      input.customer_id,
      input.template,
      input.subject,
      input.body,
      nowIso(),
      caller.run_id,
      caller.tool,
    )
    .one();
  return { status: 201, body: toEmailDraft(row) };
}

/** A human edits a draft: the text changes and `version` goes up by one. */
export function updateDraft(
  sql: SqlStorage,
  tenant: string,
  draftId: string,
  input: { subject?: string | undefined; body?: string | undefined },
): Outcome<EmailDraft> {
  const draft = readDraft(sql, tenant, draftId);
  if (!draft) return failure(404, "not_found", `No email draft with id '${draftId}'.`);
  const row = sql
    .exec<EmailDraftRow>(
      `UPDATE email_drafts SET subject = ?, body = ?, version = version + 1
        WHERE tenant = ? AND draft_id = ? RETURNING *`,
      input.subject ?? draft.subject,
      input.body ?? draft.body,
      tenant,
      draftId,
    )
    .one();
  return { status: 200, body: toEmailDraft(row) };
}

/**
 * Sends a stored draft, exactly its text, to the customer's address on file. `version` is the draft
 * version the sender approved: a draft edited since then is refused with 409, nothing sent.
 */
export function insertEmail(
  sql: SqlStorage,
  caller: Caller,
  input: { draft_id: string; version: number },
): Outcome<Email> {
  const draft = readDraft(sql, caller.tenant, input.draft_id);
  if (!draft) return failure(404, "not_found", `No email draft with id '${input.draft_id}'.`);
  if (draft.version !== input.version) {
    return failure(
      409,
      "draft_version_stale",
      `Email draft ${draft.draft_id} was edited after version ${input.version} was approved (now version ${draft.version}); nothing was sent.`,
    );
  }
  const customer = readCustomer(sql, caller.tenant, draft.customer_id);
  if (!customer) return failure(404, "not_found", `No customer with id '${draft.customer_id}'.`);
  const row = sql
    .exec<EmailRow>(
      `INSERT INTO emails (email_id, tenant, customer_id, to_address, subject, body, status, queued_at, run_id, tool, draft_id, draft_version)
        VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?) RETURNING *`,
      newId("em"),
      caller.tenant,
      customer.customer_id,
      customer.email,
      draft.subject,
      draft.body,
      nowIso(),
      caller.run_id,
      caller.tool,
      draft.draft_id,
      draft.version,
    )
    .one();
  return { status: 202, body: toEmail(row) };
}
