import { DurableObject } from "cloudflare:workers";
import type { SandboxEnv } from "./env";
import { faultStatus } from "./faults";
import { type Reservation, release, renew, reserve, storeResult } from "./idempotency";
import { newId, nowIso } from "./ids";
import {
  armFault,
  completeRequest,
  type FaultSpec,
  listFaults,
  listRequests,
  logRequest,
  type RequestMeta,
  takeFault,
} from "./journal";
import {
  type AdminEmail,
  type AdminRefund,
  type AdminTicket,
  type ArmedFault,
  type Customer,
  type Email,
  failure,
  type Order,
  type Outcome,
  type PolicySearchResult,
  type Refund,
  type RefundPolicy,
  type RequestLogEntry,
  type Ticket,
  type TicketPriority,
} from "./model";
import {
  type CustomerRow,
  type EmailRow,
  type OrderRow,
  type PolicyRow,
  type RefundRow,
  type TicketRow,
  toAdminEmail,
  toAdminRefund,
  toAdminTicket,
  toCustomer,
  toEmail,
  toOrder,
  toRefund,
  toTicket,
} from "./rows";
import { createSchema, isSeeded, resetToSeed } from "./schema";
import { searchPolicies } from "./search";

/** The caller of a write, from its verified credential. */
export interface Caller {
  tenant: string;
  run_id: string;
  tool: string;
}

/** A finished response to remember under an Idempotency-Key. */
export interface StoredResponse {
  key: string;
  status: number;
  body: string;
}

/**
 * All sandbox state: business data for every tenant, the request log, armed faults and
 * idempotency records. Each RPC method runs synchronously against SQLite, so it is atomic with
 * respect to every other call without explicit locking.
 */
export class SandboxStore extends DurableObject<SandboxEnv> {
  readonly #sql: SqlStorage;
  readonly #storage: DurableObjectStorage;

  constructor(ctx: DurableObjectState, env: SandboxEnv) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#storage = ctx.storage;
    void ctx.blockConcurrencyWhile(async () => {
      createSchema(this.#sql);
      if (!isSeeded(this.#sql)) this.#storage.transactionSync(() => resetToSeed(this.#sql));
    });
  }

  // ---- request lifecycle ----

  /**
   * Called once per authenticated request before any work: consumes a matching fault and logs the
   * request if the fault decides its fate now (`started` for a hang, `completed` otherwise).
   */
  admit(meta: RequestMeta): { seq: number | null; fault: ArmedFault | null } {
    return this.#storage.transactionSync(() => {
      const fault = meta.run_id === null ? null : takeFault(this.#sql, meta.run_id, meta.path);
      if (!fault) return { seq: null, fault: null };
      const status = fault.mode === "hang" ? null : faultStatus(fault.mode);
      return { seq: logRequest(this.#sql, meta, nowIso(), fault.mode, status), fault };
    });
  }

  /** Records a processed request (updating its `started` row if it has one) and its stored response. */
  finish(meta: RequestMeta, seq: number | null, status: number, stored: StoredResponse | null): number {
    return this.#storage.transactionSync(() => {
      if (stored && meta.tenant !== null)
        storeResult(this.#sql, meta.tenant, stored.key, stored.status, stored.body);
      if (seq === null) return logRequest(this.#sql, meta, nowIso(), null, status);
      completeRequest(this.#sql, seq, status);
      return seq;
    });
  }

  reserveIdempotency(tenant: string, key: string, fingerprint: string, leaseMs: number): Reservation {
    const now = Date.now();
    return this.#storage.transactionSync(() =>
      reserve(this.#sql, tenant, key, fingerprint, now + leaseMs, now),
    );
  }

  renewIdempotency(tenant: string, key: string, leaseMs: number): void {
    renew(this.#sql, tenant, key, Date.now() + leaseMs);
  }

  releaseIdempotency(tenant: string, key: string): void {
    release(this.#sql, tenant, key);
  }

  // ---- business reads ----

  getOrder(tenant: string, orderId: string): Order | null {
    const row = this.#sql
      .exec<OrderRow>("SELECT * FROM orders WHERE tenant = ? AND order_id = ?", tenant, orderId)
      .toArray()[0];
    return row ? toOrder(row, this.#refundsOf(tenant, orderId)) : null;
  }

  getCustomer(tenant: string, customerId: string): Customer | null {
    const row = this.#sql
      .exec<CustomerRow>("SELECT * FROM customers WHERE tenant = ? AND customer_id = ?", tenant, customerId)
      .toArray()[0];
    return row ? toCustomer(row) : null;
  }

  searchPolicies(query: string): PolicySearchResult {
    const all: RefundPolicy[] = this.#sql
      .exec<PolicyRow>("SELECT policy_id, title, summary FROM policies")
      .toArray();
    const results = searchPolicies(all, query);
    return { results, total: results.length };
  }

  // ---- business writes ----

  createRefund(
    caller: Caller,
    input: { order_id: string; amount_cents: number; reason: string },
  ): Outcome<Refund> {
    return this.#storage.transactionSync(() => {
      const order = this.getOrder(caller.tenant, input.order_id);
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
      const row = this.#sql
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
      this.#sql.exec(
        "UPDATE orders SET version = version + 1, updated_at = ? WHERE tenant = ? AND order_id = ?",
        now,
        caller.tenant,
        order.order_id,
      );
      return { status: 201, body: toRefund(row) };
    });
  }

  createTicket(
    caller: Caller,
    input: { customer_id: string; priority: TicketPriority; summary: string },
  ): Outcome<Ticket> {
    if (!this.getCustomer(caller.tenant, input.customer_id)) {
      return failure(404, "not_found", `No customer with id '${input.customer_id}'.`);
    }
    const row = this.#sql
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

  queueEmail(caller: Caller, input: { customer_id: string; subject: string; body: string }): Outcome<Email> {
    const customer = this.getCustomer(caller.tenant, input.customer_id);
    if (!customer) return failure(404, "not_found", `No customer with id '${input.customer_id}'.`);
    const row = this.#sql
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

  // ---- admin ----

  armFault(spec: FaultSpec): ArmedFault {
    return armFault(this.#sql, spec, nowIso());
  }

  listFaults(): ArmedFault[] {
    return listFaults(this.#sql);
  }

  listRequests(runId: string | null): RequestLogEntry[] {
    return listRequests(this.#sql, runId);
  }

  listRefunds(filter: { tenant: string | null; order_id: string | null }): AdminRefund[] {
    return this.#sql
      .exec<RefundRow>(
        `SELECT * FROM refunds WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR order_id = ?2)
          ORDER BY rowid`,
        filter.tenant,
        filter.order_id,
      )
      .toArray()
      .map(toAdminRefund);
  }

  listTickets(tenant: string | null): AdminTicket[] {
    return this.#sql
      .exec<TicketRow>("SELECT * FROM tickets WHERE ?1 IS NULL OR tenant = ?1 ORDER BY rowid", tenant)
      .toArray()
      .map(toAdminTicket);
  }

  listEmails(tenant: string | null): AdminEmail[] {
    return this.#sql
      .exec<EmailRow>("SELECT * FROM emails WHERE ?1 IS NULL OR tenant = ?1 ORDER BY rowid", tenant)
      .toArray()
      .map(toAdminEmail);
  }

  reset(): void {
    this.#storage.transactionSync(() => resetToSeed(this.#sql));
  }

  #refundsOf(tenant: string, orderId: string): RefundRow[] {
    return this.#sql
      .exec<RefundRow>(
        "SELECT * FROM refunds WHERE tenant = ? AND order_id = ? ORDER BY rowid",
        tenant,
        orderId,
      )
      .toArray();
  }
}
