import { DurableObject } from "cloudflare:workers";
import type * as z from "zod";
import {
  EFFECT_SHAPES,
  type EffectRequest,
  type EffectStore,
  type EffectWork,
  keyedEffectOf,
  serveKeyedEffect,
} from "./effects";
import type { SandboxEnv } from "./env";
import { faultFits, faultStatus, isAnswerMode } from "./faults";
import {
  addDrift,
  clearDrift,
  type DriftBody,
  type DriftChange,
  driftFingerprint,
  driftsOf,
} from "./helpdesk/drift";
import { keyedWrite, type ToolCallKey } from "./helpdesk/keyed";
import type {
  AddTicketNote,
  Conversation,
  HelpdeskEffect,
  Note,
  PurgeConversation,
  PurgedConversation,
  TicketNotes,
  WriteOutcome,
} from "./helpdesk/model";
import {
  addNote,
  listEffects,
  listNotes,
  purge,
  readConversation,
  searchArticles,
  ticketNotes,
} from "./helpdesk/records";
import {
  forgetSessions,
  isSessionKnown,
  markToolsSeen,
  openSession,
  takeToolsNews,
} from "./helpdesk/sessions";
import {
  type AnswerText,
  type Reservation,
  release,
  renew,
  reserve,
  type StoredAnswer,
  storedAnswer,
  storeResult,
} from "./idempotency";
import { nowIso } from "./ids";
import {
  armFault,
  completeRequest,
  type FaultSpec,
  listFaults,
  listRequests,
  logRequest,
  type RequestMeta,
  type ServedRequest,
  takeFault,
} from "./journal";
import type {
  AdminEmail,
  AdminNotification,
  AdminRefund,
  AdminShipment,
  AdminTicket,
  ArmedFault,
  Customer,
  Destination,
  Email,
  EmailDraft,
  FaultPlan,
  Order,
  Outcome,
  PolicySearchResult,
  PresentedCredential,
  Refund,
  RefundPolicy,
  RequestLogEntry,
  RerouteAnswer,
  ShapeMode,
  Shipment,
  Ticket,
  TicketPriority,
  WebhookFailure,
  WebhookRejection,
} from "./model";
import { type ReadRequest, type ReadWork, readAnswer, readShapes } from "./read-work";
import { readCustomer, readOrder, readTicket, writeOrderNote } from "./reads";
import {
  type EmailRow,
  type PolicyRow,
  type RefundRow,
  type TicketRow,
  toAdminEmail,
  toAdminRefund,
  toAdminTicket,
} from "./rows";
import { createSchema, isSeeded, resetToSeed } from "./schema";
import { searchPolicies } from "./search";
import { listShipments, readShipment, rerouteShipment } from "./shipments";
import {
  insertDraft,
  insertEmail,
  insertRefund,
  insertTicket,
  listDrafts,
  readDraft,
  readEmail,
  updateDraft,
} from "./writes";

/** The caller of a write, from its verified credential. */
export interface Caller {
  tenant: string;
  run_id: string;
  tool: string;
  /** The user the credential's act claim names (their `sub`), or null: the run acts for no user. */
  user?: string | null;
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
   * Called once per authenticated request before any work: picks its fault (the one it asked for
   * by header, else the oldest armed one that fits the endpoint, consuming one use) and logs the
   * request if it has one: `completed` when the fault answers instead of the application,
   * `started` when the application still runs.
   */
  admit(
    meta: RequestMeta,
    shapes: readonly ShapeMode[],
    requested: FaultPlan | null,
    credential: string | null = null,
  ): { seq: number | null; fault: FaultPlan | null } {
    return this.#storage.transactionSync(() => this.#admit(meta, shapes, requested, credential));
  }

  #admit(
    meta: RequestMeta,
    shapes: readonly ShapeMode[],
    requested: FaultPlan | null,
    credential: string | null,
  ): { seq: number | null; fault: FaultPlan | null } {
    const fault =
      requested ??
      (meta.run_id === null
        ? null
        : takeFault(this.#sql, meta.run_id, meta.path, (mode) => faultFits(mode, shapes)));
    if (!fault) return { seq: null, fault: null };
    const status = isAnswerMode(fault.mode) ? faultStatus(fault.mode) : null;
    // A faulted request may never finish (a hang the caller gives up on): its credential is kept now.
    this.#keepCredential(meta, credential);
    return { seq: logRequest(this.#sql, meta, nowIso(), fault.mode, status), fault };
  }

  /**
   * A read request in one commit: its fault pick, the read and its log entry. A fault that answers
   * instead of the application, or holds the request up (`hang`), comes back unplayed, with the
   * request admitted and logged `started`: the lifecycle plays it out and reads afterwards (`read`).
   */
  serveRead(request: ReadRequest): ServedRequest {
    const { meta, caller, work } = request;
    return this.#storage.transactionSync(() => {
      const { seq, fault } = this.#admit(meta, readShapes(work), request.requested, request.credential);
      if (fault && (isAnswerMode(fault.mode) || fault.mode === "hang")) return { seq, fault, answer: null };
      const answer = readAnswer(this, caller.tenant, work, fault?.mode ?? null);
      this.#finish(meta, seq, answer.status, null, request.credential);
      return { seq, fault, answer };
    });
  }

  /** A read on its own, after the hang its request suffered. */
  read(caller: Caller, work: ReadWork): AnswerText {
    return readAnswer(this, caller.tenant, work, null);
  }

  /**
   * Records a processed request (updating its `started` row if it has one), its stored response and
   * the credential it presented, in one commit.
   */
  finish(
    meta: RequestMeta,
    seq: number | null,
    status: number,
    stored: StoredResponse | null,
    credential: string | null = null,
  ): number {
    return this.#storage.transactionSync(() => this.#finish(meta, seq, status, stored, credential));
  }

  #finish(
    meta: RequestMeta,
    seq: number | null,
    status: number,
    stored: StoredResponse | null,
    credential: string | null,
  ): number {
    this.#keepCredential(meta, credential);
    if (stored && meta.tenant !== null)
      storeResult(this.#sql, meta.tenant, stored.key, stored.status, stored.body);
    if (seq === null) return logRequest(this.#sql, meta, nowIso(), null, status);
    completeRequest(this.#sql, seq, status);
    return seq;
  }

  /**
   * A keyed effect request in one commit: its fault pick, then its key's reservation, the effect,
   * its stored answer and its log entry (`effects.ts`). A fault that answers instead of the
   * application, or holds the request up (`hang`), comes back unplayed, with the request admitted
   * and logged `started`: the lifecycle plays it out and runs the effect afterwards.
   */
  serveEffect(request: EffectRequest): ServedRequest {
    const store: EffectStore = {
      sql: this.#sql,
      finish: (meta, seq, status, stored, credential) => {
        this.#finish(meta, seq, status, stored, credential);
      },
      effect: (caller, work, record) => this.effect(caller, work, record),
    };
    return this.#storage.transactionSync(() => {
      const { seq, fault } = this.#admit(request.meta, EFFECT_SHAPES, request.requested, request.credential);
      if (fault && (isAnswerMode(fault.mode) || fault.mode === "hang")) return { seq, fault, answer: null };
      const shape = EFFECT_SHAPES.find((mode) => mode === fault?.mode) ?? null;
      const answer = serveKeyedEffect(store, keyedEffectOf(request, seq, shape), Date.now());
      return { seq, fault, answer };
    });
  }

  /** One of the effects the business endpoints serve, by name; `record: false` keeps nothing. */
  effect(caller: Caller, work: EffectWork, record = true): Outcome<unknown> {
    switch (work.op) {
      case "ticket":
        return this.createTicket(caller, work.input, record);
      case "refund":
        return this.createRefund(caller, work.input, record);
      case "email":
        return this.queueEmail(caller, work.input, record);
      case "reroute":
        return this.rerouteShipment(caller, work.order_id, work.input, record);
    }
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

  answerOfIdempotencyKey(tenant: string, key: string): StoredAnswer {
    return storedAnswer(this.#sql, tenant, key, Date.now());
  }

  releaseIdempotency(tenant: string, key: string): void {
    release(this.#sql, tenant, key);
  }

  /**
   * Keeps the credential a verified request presented, the last one per run and tool: the sandbox
   * stands in for an upstream whose logs leak, so tests can replay what an attacker would find.
   */
  recordCredential(caller: Caller, credential: string): void {
    this.#saveCredential(caller, credential);
  }

  /** The credential of a logged request, kept with its log entry. */
  #keepCredential(meta: RequestMeta, credential: string | null): void {
    if (credential === null || meta.tenant === null || meta.run_id === null || meta.tool === null) return;
    this.#saveCredential({ tenant: meta.tenant, run_id: meta.run_id, tool: meta.tool }, credential);
  }

  #saveCredential(caller: Caller, credential: string): void {
    this.#sql.exec(
      `INSERT INTO credentials (run_id, tool, tenant, credential, presented_at) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (run_id, tool) DO UPDATE SET tenant = excluded.tenant,
          credential = excluded.credential, presented_at = excluded.presented_at`,
      caller.run_id,
      caller.tool,
      caller.tenant,
      credential,
      nowIso(),
    );
  }

  // ---- business reads ----

  getOrder(tenant: string, orderId: string): Order | null {
    return readOrder(this.#sql, tenant, orderId);
  }

  /** A customer's note on their order, as the shop would store it (admin API, for tests and demos). */
  setOrderNote(tenant: string, orderId: string, note: string): boolean {
    return writeOrderNote(this.#sql, tenant, orderId, note);
  }

  getCustomer(tenant: string, customerId: string): Customer | null {
    return readCustomer(this.#sql, tenant, customerId);
  }

  getTicket(tenant: string, ticketId: string): Ticket | null {
    return readTicket(this.#sql, tenant, ticketId);
  }

  getShipment(tenant: string, orderId: string): Shipment | null {
    return readShipment(this.#sql, tenant, orderId);
  }

  searchPolicies(query: string): PolicySearchResult {
    const all: RefundPolicy[] = this.#sql
      .exec<PolicyRow>("SELECT policy_id, title, summary FROM policies")
      .toArray();
    const results = searchPolicies(all, query);
    return { results, total: results.length };
  }

  // ---- business writes: `record: false` answers as usual and keeps nothing (silent_failure) ----

  createRefund(
    caller: Caller,
    input: { order_id: string; amount_cents: number; reason: string },
    record = true,
  ): Outcome<Refund> {
    return this.#write(record, () => insertRefund(this.#sql, caller, input));
  }

  createTicket(
    caller: Caller,
    input: { customer_id: string; priority: TicketPriority; summary: string },
    record = true,
  ): Outcome<Ticket> {
    return this.#write(record, () => insertTicket(this.#sql, caller, input));
  }

  queueEmail(caller: Caller, input: { draft_id: string; version: number }, record = true): Outcome<Email> {
    return this.#write(record, () => insertEmail(this.#sql, caller, input));
  }

  rerouteShipment(
    caller: Caller,
    orderId: string,
    input: { destination: Destination; reason: string },
    record = true,
  ): Outcome<RerouteAnswer> {
    return this.#write(record, () => rerouteShipment(this.#sql, caller, orderId, input));
  }

  createDraft(
    caller: Caller,
    input: { customer_id: string; template: string; subject: string; body: string },
  ): Outcome<EmailDraft> {
    return this.#write(true, () => insertDraft(this.#sql, caller, input));
  }

  editDraft(
    tenant: string,
    draftId: string,
    input: { subject?: string | undefined; body?: string | undefined },
  ): Outcome<EmailDraft> {
    return this.#write(true, () => updateDraft(this.#sql, tenant, draftId, input));
  }

  getDraft(tenant: string, draftId: string): EmailDraft | null {
    return readDraft(this.#sql, tenant, draftId);
  }

  listDrafts(tenant: string | null): EmailDraft[] {
    return listDrafts(this.#sql, tenant);
  }

  getEmail(tenant: string, emailId: string): Email | null {
    return readEmail(this.#sql, tenant, emailId);
  }

  // ---- helpdesk (MCP): a write and its idempotency key in one transaction ----

  searchArticles(tenant: string, query: string, limit: number) {
    return searchArticles(this.#sql, tenant, query, limit);
  }

  getTicketNotes(tenant: string, ticketId: string): TicketNotes | null {
    return ticketNotes(this.#sql, tenant, ticketId);
  }

  addTicketNote(caller: Caller, input: AddTicketNote, key: ToolCallKey | null): WriteOutcome<Note> {
    return this.#storage.transactionSync(() =>
      keyedWrite(this.#sql, caller.tenant, key, () => addNote(this.#sql, caller, input, key?.key ?? null)),
    );
  }

  getConversation(tenant: string, conversationId: string): Conversation | null {
    return readConversation(this.#sql, tenant, conversationId);
  }

  purgeConversation(
    caller: Caller,
    input: PurgeConversation,
    key: ToolCallKey | null,
  ): WriteOutcome<PurgedConversation> {
    return this.#storage.transactionSync(() =>
      keyedWrite(this.#sql, caller.tenant, key, () => purge(this.#sql, caller, input, key?.key ?? null)),
    );
  }

  helpdeskDrifts(tenant: string): Map<string, Set<DriftChange>> {
    return driftsOf(this.#sql, tenant);
  }

  driftHelpdeskTool(drift: z.infer<typeof DriftBody>): void {
    addDrift(this.#sql, drift);
  }

  resetHelpdeskDrift(tenant: string | null): void {
    clearDrift(this.#sql, tenant);
  }

  openHelpdeskSession(tenant: string): string {
    const sessionId = openSession(this.#sql, tenant);
    markToolsSeen(this.#sql, tenant, sessionId, driftFingerprint(this.#sql, tenant));
    return sessionId;
  }

  /**
   * Whether a 2025 session's request tells it that the tools changed: a `tools/list` shows them
   * (and tells nothing), a `tools/call` tells once of a drift since the session last saw them.
   */
  helpdeskToolsNews(tenant: string, sessionId: string, method: "tools/list" | "tools/call"): boolean {
    const drift = driftFingerprint(this.#sql, tenant);
    if (method === "tools/call") return takeToolsNews(this.#sql, tenant, sessionId, drift);
    markToolsSeen(this.#sql, tenant, sessionId, drift);
    return false;
  }

  isHelpdeskSessionKnown(tenant: string, sessionId: string): boolean {
    return isSessionKnown(this.#sql, tenant, sessionId);
  }

  forgetHelpdeskSessions(tenant: string | null, sessionId: string | null): number {
    return forgetSessions(this.#sql, tenant, sessionId);
  }

  listHelpdeskEffects(filter: { tenant: string | null; tool: string | null }): HelpdeskEffect[] {
    return listEffects(this.#sql, filter);
  }

  listHelpdeskNotes(filter: { tenant: string | null; idempotency_key: string | null }) {
    return listNotes(this.#sql, filter);
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

  listCredentials(runId: string): PresentedCredential[] {
    return this.#sql
      .exec<PresentedCredential & Record<string, SqlStorageValue>>(
        "SELECT run_id, tool, tenant, credential, presented_at FROM credentials WHERE run_id = ? ORDER BY tool",
        runId,
      )
      .toArray()
      .map((row) => ({
        run_id: row.run_id,
        tool: row.tool,
        tenant: row.tenant,
        credential: row.credential,
        presented_at: row.presented_at,
      }));
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

  listShipments(tenant: string | null): AdminShipment[] {
    return listShipments(this.#sql, tenant);
  }

  /**
   * An approval webhook whose signature verified, recorded under its `webhook-id` unless that id
   * was recorded before: then only counted as a redelivery, and false. One synchronous
   * transaction, so two copies of a delivery racing in are told apart.
   */
  recordVerifiedNotification(delivery: {
    webhook_id: string;
    webhook_timestamp: number;
    body: unknown;
  }): boolean {
    return this.#storage.transactionSync(() => {
      const seen = this.#sql
        .exec(
          "UPDATE webhook_deliveries SET redeliveries = redeliveries + 1 WHERE webhook_id = ? RETURNING 1",
          delivery.webhook_id,
        )
        .toArray();
      if (seen.length > 0) return false;
      const { seq } = this.#sql
        .exec<{ seq: number }>(
          "INSERT INTO notifications (at, body) VALUES (?, ?) RETURNING seq",
          nowIso(),
          JSON.stringify(delivery.body),
        )
        .one();
      this.#sql.exec(
        "INSERT INTO webhook_deliveries (webhook_id, notification_seq, webhook_timestamp) VALUES (?, ?, ?)",
        delivery.webhook_id,
        seq,
        delivery.webhook_timestamp,
      );
      return true;
    });
  }

  /** Makes the receiver fail: the next `count` deliveries (of `webhook_id`, or any) answer 503. */
  armWebhookFailure(failure: WebhookFailure): WebhookFailure {
    this.#sql.exec(
      "INSERT INTO webhook_failures (webhook_id, remaining) VALUES (?, ?)",
      failure.webhook_id,
      failure.remaining,
    );
    return failure;
  }

  /** Whether this delivery meets an armed failure, which it then uses up by one. */
  takeWebhookFailure(webhookId: string): boolean {
    return this.#storage.transactionSync(() => {
      const armed = this.#sql
        .exec<{ seq: number }>(
          `SELECT seq FROM webhook_failures WHERE remaining > 0 AND (webhook_id IS NULL OR webhook_id = ?)
           ORDER BY webhook_id IS NULL, seq LIMIT 1`,
          webhookId,
        )
        .toArray()[0];
      if (!armed) return false;
      this.#sql.exec("UPDATE webhook_failures SET remaining = remaining - 1 WHERE seq = ?", armed.seq);
      this.#sql.exec("DELETE FROM webhook_failures WHERE remaining <= 0");
      return true;
    });
  }

  /** A delivery refused (unsigned, forged, stale, or met by an armed failure): why, never its body. */
  recordWebhookRejection(rejection: Omit<WebhookRejection, "seq" | "at">): void {
    this.#sql.exec(
      "INSERT INTO webhook_rejections (at, webhook_id, status, code, message) VALUES (?, ?, ?, ?, ?)",
      nowIso(),
      rejection.webhook_id,
      rejection.status,
      rejection.code,
      rejection.message,
    );
  }

  listNotifications(): AdminNotification[] {
    return this.#sql
      .exec<{
        seq: number;
        at: string;
        body: string;
        webhook_id: string | null;
        webhook_timestamp: number | null;
        redeliveries: number | null;
      }>(
        `SELECT n.seq, n.at, n.body, d.webhook_id, d.webhook_timestamp, d.redeliveries FROM notifications n
          LEFT JOIN webhook_deliveries d ON d.notification_seq = n.seq ORDER BY n.seq`,
      )
      .toArray()
      .map((row) => ({
        seq: row.seq,
        at: row.at,
        verified: row.webhook_id !== null,
        webhook_id: row.webhook_id,
        webhook_timestamp: row.webhook_timestamp,
        redeliveries: row.redeliveries ?? 0,
        body: JSON.parse(row.body) as unknown,
      }));
  }

  listWebhookRejections(): WebhookRejection[] {
    return this.#sql
      .exec<{ [K in keyof WebhookRejection]: WebhookRejection[K] }>(
        "SELECT seq, at, webhook_id, status, code, message FROM webhook_rejections ORDER BY seq",
      )
      .toArray();
  }

  reset(): void {
    this.#storage.transactionSync(() => resetToSeed(this.#sql));
  }

  /**
   * Runs one write atomically. Unrecorded, it runs all the way (checks, new id, timestamps) and is
   * then rolled back, so its answer is exactly what a real write would have said.
   */
  #write<T>(record: boolean, write: () => Outcome<T>): Outcome<T> {
    if (record) return this.#storage.transactionSync(write);
    try {
      return this.#storage.transactionSync(() => {
        throw new Discarded(write());
      });
    } catch (thrown) {
      if (thrown instanceof Discarded) return thrown.outcome as Outcome<T>;
      throw thrown;
    }
  }
}

/** Thrown to roll back a write whose answer is still wanted; throwing is how a transaction aborts. */
class Discarded {
  constructor(readonly outcome: Outcome<unknown>) {}
}
