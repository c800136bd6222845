import type { MetricsStore, MinuteDelta } from "../ledger/metrics-store";
import { addCounts, type MetricEvent, zeroCounts } from "./events";

/** A tenant's MetricsStore, placed where the tenant's residency says (src/config/placement.ts). */
export type StoreOf = (tenant: string) => Pick<DurableObjectStub<MetricsStore>, "record">;

/** Keeps work alive after the answer: an ExecutionContext's `waitUntil`. */
export type Defer = (work: Promise<unknown>) => void;

/** At most one batch per isolate per this interval reaches the stores... */
export const FLUSH_INTERVAL_MS = 1_000;
/** ...unless this many distinct minute rows are waiting, which are sent at once. */
export const FLUSH_AT_ROWS = 256;
/**
 * A scheduled flush that has not run after this long was lost with its request (cancelled, or the
 * isolate was shut down while it waited): the next event schedules another.
 */
const LOST_FLUSH_MS = 10 * FLUSH_INTERVAL_MS;

/**
 * Events waiting in this isolate, summed per tenant and per minute, namespace and tool. Module
 * scope on purpose: every request the isolate serves adds here, and one flush carries them all, so
 * a flood of calls is one RPC per tenant per second, not one per call.
 */
let waiting = new Map<string, Map<string, MinuteDelta>>();
let waitingRows = 0;
let flushScheduledAt: number | null = null;

/**
 * The local sink: adds the event to this isolate's batch and makes sure a flush will send it. The
 * flush runs in `defer` of the request that scheduled it, after that request's answer.
 */
export function bufferForStore(store: StoreOf, event: MetricEvent, defer: Defer): void {
  add(event);
  if (waitingRows >= FLUSH_AT_ROWS) {
    defer(flushTo(store));
    return;
  }
  const now = Date.now();
  if (flushScheduledAt !== null && now - flushScheduledAt < LOST_FLUSH_MS) return;
  flushScheduledAt = now;
  defer(sleep(FLUSH_INTERVAL_MS).then(() => flushTo(store)));
}

function add(event: MetricEvent): void {
  const minute = Math.floor(event.at / 60_000);
  const key = `${minute}\u0000${event.namespace}\u0000${event.tool}`;
  let rows = waiting.get(event.tenant);
  if (!rows) {
    rows = new Map();
    waiting.set(event.tenant, rows);
  }
  const row = rows.get(key);
  if (row) {
    addCounts(row.counts, event.counts);
    return;
  }
  rows.set(key, {
    minute,
    namespace: event.namespace,
    tool: event.tool,
    counts: addCounts(zeroCounts(), event.counts),
  });
  waitingRows++;
}

/**
 * Drops the batch waiting here, and the memory of a flush scheduled for it: for a test runtime
 * whose stores were just wiped, where a flush scheduled in a Durable Object that was wiped with
 * them never comes.
 */
export function forgetWaitingMetrics(): void {
  waiting = new Map();
  waitingRows = 0;
  flushScheduledAt = null;
}

/** Sends everything waiting, one RPC per tenant. A store that fails loses its batch: counts, not records. */
export async function flushTo(store: StoreOf): Promise<void> {
  const batch = waiting;
  waiting = new Map();
  waitingRows = 0;
  flushScheduledAt = null;
  await Promise.all(
    [...batch].map(async ([tenant, rows]) => {
      try {
        await store(tenant).record([...rows.values()], tenant);
      } catch (error) {
        console.error("metrics store write failed", error);
      }
    }),
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
