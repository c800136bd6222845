import type * as z from "zod";
import { withFailedItem } from "./fault-shapes";
import { errorBody, jsonText } from "./http";
import { type AnswerText, release, reservationAnswer, reserve } from "./idempotency";
import type { RequestMeta } from "./journal";
import type { FailedItem, FaultPlan, Outcome } from "./model";
import type { Caller, StoredResponse } from "./store";
import type { EmailBody, Parsed, RefundBody, RerouteBody, TicketBody } from "./validation";

/**
 * An effect the sandbox serves, named rather than passed as a function, so the store runs it itself:
 * on its own (`SandboxStore.effect`), or with its key's reservation and its log entry in one commit
 * (`serveKeyedEffect`).
 */
export type EffectWork =
  | { op: "ticket"; input: z.infer<typeof TicketBody> }
  | { op: "refund"; input: z.infer<typeof RefundBody> }
  | { op: "email"; input: z.infer<typeof EmailBody> }
  | { op: "reroute"; order_id: string; input: z.infer<typeof RerouteBody> };

/** The shape faults an effect can suffer; `underShape` says what each changes in what the store does. */
export const EFFECT_SHAPES = ["partial_success", "silent_failure"] as const;
export type EffectShape = (typeof EFFECT_SHAPES)[number];

/**
 * What an effect's shape fault (null for none) changes, keyed or not: `silent_failure` keeps
 * nothing of it, `partial_success` reports `partialItem` as the part that did not go through.
 */
export function underShape(
  shape: EffectShape | null,
  partialItem: FailedItem,
): { record: boolean; failed_item: FailedItem | null } {
  return {
    record: shape !== "silent_failure",
    failed_item: shape === "partial_success" ? partialItem : null,
  };
}

/**
 * A keyed effect request as the request lifecycle hands it to the store, before its fault is picked
 * (`SandboxStore.serveEffect`): its fault pick and, unless that fault answers or holds it up, the
 * effect itself are one commit.
 */
export interface EffectRequest {
  meta: RequestMeta;
  credential: string | null;
  caller: Caller;
  key: string;
  fingerprint: string;
  lease_ms: number;
  /** The body read as the effect, or why it could not be: a key's replay or refusal comes first. */
  work: Parsed<EffectWork>;
  /** The fault the request's headers asked for; null lets the store pick an armed one. */
  requested: FaultPlan | null;
  /** The part `partial_success` reports as not gone through. */
  partial_item: FailedItem;
}

/** A keyed effect nothing holds up (no hang), with its fault picked. */
export interface KeyedEffect extends Omit<EffectRequest, "requested" | "partial_item"> {
  /** Its log entry, when its fault wrote one. */
  seq: number | null;
  /** False under `silent_failure`: answered as usual, kept nowhere. */
  record: boolean;
  /** Under `partial_success`, the part reported as not gone through. */
  failed_item: FailedItem | null;
}

/** `request` under the shape fault it suffers (null for none), logged at `seq`. */
export function keyedEffectOf(
  request: EffectRequest,
  seq: number | null,
  shape: EffectShape | null,
): KeyedEffect {
  const { requested: _requested, partial_item, ...effect } = request;
  return { ...effect, seq, ...underShape(shape, partial_item) };
}

/** What `serveKeyedEffect` needs of the store, all synchronous, inside its one transaction. */
export interface EffectStore {
  sql: SqlStorage;
  /** Logs the request as processed, with the answer to keep under its key when there is one. */
  finish(
    meta: RequestMeta,
    seq: number | null,
    status: number,
    stored: StoredResponse | null,
    credential: string | null,
  ): void;
  effect(caller: Caller, work: EffectWork, record: boolean): Outcome<unknown>;
}

/**
 * A keyed effect in one synchronous step: the key's reservation, then the effect and its stored
 * answer, and the request's log entry. What the key already holds (an answer to replay, another
 * request under it) or a body that does not parse is answered and logged the same way, the
 * reservation given back for the latter. Call it inside one `transactionSync`: a concurrent request
 * under the same key then finds the answer, never a key reserved with nothing done yet.
 */
export function serveKeyedEffect(store: EffectStore, request: KeyedEffect, now: number): AnswerText {
  const { meta, caller, key } = request;
  const answer = (status: number, text: string, headers: Record<string, string> = {}, remember = false) => {
    store.finish(
      meta,
      request.seq,
      status,
      remember ? { key, status, body: text } : null,
      request.credential,
    );
    return { status, text, headers };
  };
  const reservation = reserve(
    store.sql,
    caller.tenant,
    key,
    request.fingerprint,
    now + request.lease_ms,
    now,
  );
  const taken = reservationAnswer(reservation);
  if (taken) return answer(taken.status, taken.text, taken.headers);
  if (!request.work.ok) {
    release(store.sql, caller.tenant, key);
    return answer(400, jsonText(errorBody("invalid_request", request.work.message)));
  }
  const outcome = store.effect(caller, request.work.value, request.record);
  const shaped = request.failed_item ? withFailedItem(outcome, request.failed_item) : outcome;
  return answer(shaped.status, jsonText(shaped.body), {}, true);
}
