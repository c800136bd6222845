import { shapeCustomer, shapeOrder, shapePolicies, shapeShipment } from "./fault-shapes";
import { jsonText } from "./http";
import type { AnswerText, StoredAnswer } from "./idempotency";
import type { RequestMeta } from "./journal";
import {
  type Customer,
  type Email,
  type EmailDraft,
  type FaultMode,
  type FaultPlan,
  failure,
  type Order,
  type Outcome,
  type PolicySearchResult,
  type ShapeMode,
  type Shipment,
  type Ticket,
} from "./model";
import type { Caller } from "./store";

/**
 * A read a business endpoint serves, named rather than passed as a function, so the store runs it
 * itself: with its fault pick and its log entry in one commit (`SandboxStore.serveRead`), or on its
 * own after a hang (`SandboxStore.read`).
 */
export type ReadWork =
  | { op: "order"; order_id: string }
  | { op: "shipment"; order_id: string }
  | { op: "customer"; customer_id: string }
  | { op: "policies"; query: string }
  | { op: "draft"; draft_id: string }
  | { op: "ticket"; ticket_id: string }
  | { op: "email"; email_id: string }
  | { op: "key_answer"; key: string };

/** A read request as the request lifecycle hands it to the store. */
export interface ReadRequest {
  meta: RequestMeta;
  credential: string | null;
  caller: Caller;
  /** The fault its headers asked for, if any; else the store picks an armed one that fits. */
  requested: FaultPlan | null;
  work: ReadWork;
}

/** What a read needs of the store: its rows, scoped to the caller's tenant. */
export interface ReadSource {
  getOrder(tenant: string, orderId: string): Order | null;
  getShipment(tenant: string, orderId: string): Shipment | null;
  getCustomer(tenant: string, customerId: string): Customer | null;
  searchPolicies(query: string): PolicySearchResult;
  getDraft(tenant: string, draftId: string): EmailDraft | null;
  getTicket(tenant: string, ticketId: string): Ticket | null;
  getEmail(tenant: string, emailId: string): Email | null;
  answerOfIdempotencyKey(tenant: string, key: string): StoredAnswer;
}

/** The shape faults each read declares: a shape fault spoils only an answer that has that part. */
const SHAPES = {
  order: ["stale", "injection"],
  shipment: ["stale"],
  customer: ["stale", "injection"],
  policies: ["injection", "large"],
  draft: [],
  ticket: [],
  email: [],
  key_answer: [],
} as const satisfies { [op in ReadWork["op"]]: readonly ShapeMode[] };

export function readShapes(work: ReadWork): readonly ShapeMode[] {
  return SHAPES[work.op];
}

/** `shape` when it is one of `allowed`, else null (a delivery fault, say, leaves the body whole). */
function pick<S extends ShapeMode>(shape: FaultMode | null, allowed: readonly S[]): S | null {
  return allowed.find((s) => s === shape) ?? null;
}

/** The answer to `work` for `tenant`, as sent, spoiled by the request's fault if it shapes this read. */
export function readAnswer(
  source: ReadSource,
  tenant: string,
  work: ReadWork,
  fault: FaultMode | null,
): AnswerText {
  const outcome = readOutcome(source, tenant, work, fault);
  return { status: outcome.status, text: jsonText(outcome.body), headers: {} };
}

function readOutcome(
  source: ReadSource,
  tenant: string,
  work: ReadWork,
  shape: FaultMode | null,
): Outcome<unknown> {
  switch (work.op) {
    case "order": {
      const order = source.getOrder(tenant, work.order_id);
      return order
        ? { status: 200, body: shapeOrder(order, pick(shape, SHAPES.order)) }
        : failure(404, "not_found", `No order with id '${work.order_id}'.`);
    }
    case "shipment": {
      const shipment = source.getShipment(tenant, work.order_id);
      return shipment
        ? { status: 200, body: shapeShipment(shipment, pick(shape, SHAPES.shipment)) }
        : failure(404, "not_found", `No shipment for order '${work.order_id}'.`);
    }
    case "customer": {
      const customer = source.getCustomer(tenant, work.customer_id);
      return customer
        ? { status: 200, body: shapeCustomer(customer, pick(shape, SHAPES.customer)) }
        : failure(404, "not_found", `No customer with id '${work.customer_id}'.`);
    }
    case "policies":
      return {
        status: 200,
        body: shapePolicies(source.searchPolicies(work.query), pick(shape, SHAPES.policies)),
      };
    case "draft": {
      const draft = source.getDraft(tenant, work.draft_id);
      return draft
        ? { status: 200, body: draft }
        : failure(404, "not_found", `No email draft with id '${work.draft_id}'.`);
    }
    case "ticket": {
      const ticket = source.getTicket(tenant, work.ticket_id);
      return ticket
        ? { status: 200, body: ticket }
        : failure(404, "not_found", `No ticket with id '${work.ticket_id}'.`);
    }
    case "email": {
      const email = source.getEmail(tenant, work.email_id);
      return email
        ? { status: 200, body: email }
        : failure(404, "not_found", `No email with id '${work.email_id}'.`);
    }
    case "key_answer":
      return keyAnswer(source.answerOfIdempotencyKey(tenant, work.key));
  }
}

/**
 * The answer a write's Idempotency-Key got, for a caller that lost it on the way: the stored status
 * and body as they were answered · 404 `idempotency_key_unknown` (never sent, or abandoned before it
 * ran) · 409 `idempotency_key_in_use` while the request still runs.
 */
function keyAnswer(answer: StoredAnswer): Outcome<unknown> {
  switch (answer.state) {
    case "answered":
      return { status: answer.status, body: JSON.parse(answer.body) as unknown };
    case "running":
      return failure(
        409,
        "idempotency_key_in_use",
        "The request with this Idempotency-Key is still running.",
      );
    case "unknown":
      return failure(404, "idempotency_key_unknown", "No answer is stored under this Idempotency-Key.");
  }
}
