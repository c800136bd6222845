import type { Context } from "hono";
import type * as z from "zod";
import type { AppEnv } from "./auth";
import { EFFECT_SHAPES, type EffectRequest, type EffectShape, type EffectWork, underShape } from "./effects";
import { storeOf } from "./env";
import { withFailedItem } from "./fault-shapes";
import { DEFAULT_HANG_MS, faultResponse, isAnswerMode, requestedFault, truncate } from "./faults";
import { errorBody, errorResponse, jsonResponse, jsonText } from "./http";
import {
  HEARTBEAT_MS,
  IDEMPOTENCY_LEASE_MS,
  MAX_KEY_LENGTH,
  requestFingerprint,
  reservationAnswer,
} from "./idempotency";
import type { RequestMeta } from "./journal";
import { type FailedItem, type FaultPlan, isOversizedMode, type Outcome, type ShapeMode } from "./model";
import { oversizedResponse } from "./oversized";
import { type ReadWork, readShapes } from "./read-work";
import type { Caller } from "./store";
import { type Parsed, parseBody } from "./validation";

/**
 * The life of one business request: fault injection, idempotency, the optional hang, the work
 * itself, the log entry that lets tests see exactly what the upstream did, and finally delivery.
 */

/** `shape` is the shape fault this request suffers, one of those its endpoint declared. */
type Work<T, S extends ShapeMode> = (caller: Caller, input: T, shape: S | null) => Promise<Outcome<unknown>>;

/**
 * A GET: no body and no idempotency (GETs are safe to repeat by definition). The store serves it,
 * its fault pick, the read and its log entry, in one call and one commit (`SandboxStore.serveRead`);
 * a fault that answers instead, or holds the request up, is played here.
 */
export async function serveRead(c: Context<AppEnv>, work: ReadWork): Promise<Response> {
  const caller = c.get("caller");
  const store = storeOf(c.env);
  const meta = metaOf(c, caller);
  const presented = c.get("credential");
  const credential = presented.token;
  const requested = await askedFault(c, meta, readShapes(work));
  if ("refused" in requested) return requested.refused;
  const { seq, fault, answer } = await store.serveRead({
    meta,
    credential,
    caller,
    requested: requested.fault,
    work,
  });
  if (fault || answer) presented.logged = true;
  if (answer) return deliver(fault, answer.status, answer.text, answer.headers);
  if (!fault) throw new Error("the store served a read with neither an answer nor a fault");
  if (isAnswerMode(fault.mode)) return faultResponse({ ...fault, mode: fault.mode }, meta);
  // Held up by `hang`: if the caller gives up meanwhile, the runtime cancels this request and its
  // log entry stays `started`.
  await hang(fault.hang_ms ?? DEFAULT_HANG_MS, null);
  const late = await store.read(caller, work);
  await store.finish(meta, seq, late.status, null, credential);
  return deliver(fault, late.status, late.text, late.headers);
}

/** A POST that changes nothing (a rendered draft): no shape fault has anything to spoil. */
export function serveWrite<T>(
  c: Context<AppEnv>,
  schema: z.ZodType<T>,
  work: (caller: Caller, input: T) => Promise<Outcome<unknown>>,
): Promise<Response> {
  return serve(
    c,
    (raw) => parseBody(schema, raw),
    [],
    (caller, input) => work(caller, input),
  );
}

/**
 * A POST with an effect, which the store runs by name (`effects.ts`). `silent_failure` runs it
 * unrecorded, `partial_success` runs it and reports `failedItem` as the part that did not go
 * through. Under its Idempotency-Key and held up by no hang, the fault pick, the key's reservation,
 * the effect and the log entry are one commit of the store.
 */
export function serveEffect<T>(
  c: Context<AppEnv>,
  schema: z.ZodType<T>,
  failedItem: FailedItem,
  effect: (input: T) => EffectWork,
  keys: "honoured" | "ignored" = "honoured",
): Promise<Response> {
  const parse = (raw: string): Parsed<EffectWork> => {
    const parsed = parseBody(schema, raw);
    return parsed.ok ? { ok: true, value: effect(parsed.value) } : parsed;
  };
  const store = storeOf(c.env);
  return serve<EffectWork, EffectShape>(
    c,
    parse,
    EFFECT_SHAPES,
    async (caller, work, shape) => {
      const { record, failed_item } = underShape(shape, failedItem);
      const outcome = await store.effect(caller, work, record);
      return failed_item ? withFailedItem(outcome, failed_item) : outcome;
    },
    keys === "honoured" ? (raw) => ({ work: parse(raw), partial_item: failedItem }) : undefined,
    keys,
  );
}

/**
 * The fault the request's headers ask for (null for none), or the 400 refusing headers the endpoint
 * cannot suffer, logged with the credential the request presented.
 */
async function askedFault(
  c: Context<AppEnv>,
  meta: RequestMeta,
  shapes: readonly ShapeMode[],
): Promise<{ fault: FaultPlan | null } | { refused: Response }> {
  const requested = requestedFault((name) => c.req.header(name), shapes, `${meta.method} ${meta.path}`);
  if (requested.ok) return { fault: requested.fault };
  const presented = c.get("credential");
  await storeOf(c.env).finish(meta, null, 400, null, presented.token);
  presented.logged = true;
  return { refused: errorResponse(400, "invalid_request", requested.message) };
}

/** What the request log keeps of a request, for any route that serves the proxy's calls. */
export function metaOf(c: Context<AppEnv>, caller: Caller): RequestMeta {
  return {
    tenant: caller.tenant,
    run_id: caller.run_id,
    tool: caller.tool,
    method: c.req.method,
    path: c.req.path,
    idempotency_key: c.req.header("idempotency-key") ?? null,
    traceparent: c.req.header("traceparent") ?? null,
  };
}

/** A keyed effect's one-commit path: the effect its body names, and what `partial_success` reports. */
type OneCommit = (raw: string) => Pick<EffectRequest, "work" | "partial_item">;

async function serve<T, S extends ShapeMode>(
  c: Context<AppEnv>,
  parse: (raw: string) => Parsed<T>,
  shapes: readonly S[],
  work: Work<T, S>,
  oneCommit?: OneCommit,
  keys: "honoured" | "ignored" = "honoured",
): Promise<Response> {
  const caller = c.get("caller");
  const store = storeOf(c.env);
  const meta = metaOf(c, caller);
  // An endpoint that ignores keys still logs the one it was sent (the journal shows what arrived),
  // but neither deduplicates by it nor keeps its answer under it: every request is a new effect.
  const key = keys === "ignored" ? null : meta.idempotency_key;
  const keyValid = key !== null && key.length > 0 && key.length <= MAX_KEY_LENGTH;
  // The credential goes into the request's log entry, in the commit that writes it.
  const presented = c.get("credential");
  const credential = presented.token;

  const requested = await askedFault(c, meta, shapes);
  if ("refused" in requested) return requested.refused;

  const raw = await c.req.text();
  const fingerprint = keyValid ? await requestFingerprint(meta.method, meta.path, raw) : null;
  // Faults sit in front of the application, like a gateway or a crashing app server would. A keyed
  // effect's fault is picked in the commit that serves it, unless that fault answers or hangs.
  let admitted: { seq: number | null; fault: FaultPlan | null };
  if (oneCommit && key !== null && fingerprint !== null) {
    const served = await store.serveEffect({
      meta,
      credential,
      caller,
      key,
      fingerprint,
      lease_ms: IDEMPOTENCY_LEASE_MS,
      requested: requested.fault,
      ...oneCommit(raw),
    });
    if (served.answer) {
      presented.logged = true;
      return deliver(served.fault, served.answer.status, served.answer.text, served.answer.headers);
    }
    admitted = served;
  } else admitted = await store.admit(meta, shapes, requested.fault, credential);
  const { seq, fault } = admitted;
  if (fault) presented.logged = true;
  if (fault && isAnswerMode(fault.mode)) return faultResponse({ ...fault, mode: fault.mode }, meta);
  const hangMs = fault?.mode === "hang" ? (fault.hang_ms ?? DEFAULT_HANG_MS) : 0;
  const shape = shapes.find((s) => s === fault?.mode) ?? null;

  /** Logs the request as completed; `remember` also stores the answer under the Idempotency-Key. */
  const finish = async (
    status: number,
    text: string,
    headers: Record<string, string> = {},
    remember = false,
  ) => {
    const stored = remember && key !== null ? { key, status, body: text } : null;
    await store.finish(meta, seq, status, stored, credential);
    presented.logged = true;
    return deliver(fault, status, text, headers);
  };
  const reject = (status: number, code: string, message: string) =>
    finish(status, jsonText(errorBody(code, message)));

  if (key !== null) {
    if (fingerprint === null) {
      return reject(400, "invalid_request", `Idempotency-Key must be 1-${MAX_KEY_LENGTH} characters.`);
    }
    // Reserved before the hang: a slow request holds its key for as long as it runs.
    const reservation = await store.reserveIdempotency(caller.tenant, key, fingerprint, IDEMPOTENCY_LEASE_MS);
    const taken = reservationAnswer(reservation);
    if (taken) {
      await hang(hangMs, null);
      return finish(taken.status, taken.text, taken.headers);
    }
  }

  // If the caller gives up during the hang, the runtime cancels this request mid-wait: the log
  // entry stays `started` (the evidence tests use to prove an abort) and the heartbeat stops, so
  // the key frees up shortly after instead of blocking retries for the whole hang.
  await hang(
    hangMs,
    key === null ? null : () => store.renewIdempotency(caller.tenant, key, IDEMPOTENCY_LEASE_MS),
  );

  const parsed = parse(raw);
  if (!parsed.ok) {
    if (key !== null) await store.releaseIdempotency(caller.tenant, key);
    return reject(400, "invalid_request", parsed.message);
  }
  const outcome = await work(caller, parsed.value, shape);
  return finish(outcome.status, jsonText(outcome.body), {}, true);
}

/**
 * Sends an answer that is already on record, spoiled by a delivery fault. By now the effect and
 * its idempotency record are stored, so a caller that gives up during `slow_success` has still
 * caused the effect, and its retry with the same key gets the replay.
 */
async function deliver(
  fault: FaultPlan | null,
  status: number,
  text: string,
  headers: Record<string, string>,
): Promise<Response> {
  if (fault?.mode === "slow_success") await scheduler.wait(fault.hang_ms ?? DEFAULT_HANG_MS);
  if (fault && isOversizedMode(fault.mode)) return oversizedResponse(fault.mode);
  // The stored answer stays whole: only this delivery is cut, so a replay comes back intact.
  return jsonResponse(status, fault?.mode === "truncated" ? truncate(text) : text, headers);
}

/** Waits in slices, renewing the idempotency lease between them while the request is alive. */
async function hang(ms: number, heartbeat: (() => Promise<void>) | null): Promise<void> {
  if (!heartbeat) {
    if (ms > 0) await scheduler.wait(ms);
    return;
  }
  for (let left = ms; left > 0; left -= HEARTBEAT_MS) {
    await scheduler.wait(Math.min(left, HEARTBEAT_MS));
    await heartbeat();
  }
}

/**
 * Unknown routes. No tool serves them, so no credential is checked and nothing is logged: the request
 * log holds what a tool's credential was presented for.
 */
export async function notFound(c: Context<AppEnv>): Promise<Response> {
  return errorResponse(404, "not_found", `No route for ${c.req.method} ${c.req.path}.`);
}
