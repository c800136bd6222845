import type { LedgerClient } from "../ledger/client";
import type { TraceEntry } from "../wire/trace-entry";
import { otlpFrame, otlpSpan, otlpTraceId } from "./trace-otlp";

/** Entries per ledger request while an export streams: a bounded piece of memory at a time. */
export const EXPORT_PAGE = 250;

const encoder = new TextEncoder();

/**
 * A run's whole trace as a stream, read from its ledger a page at a time: the Worker holds one page,
 * never the run, so a 10,000-call trace costs the same memory as a 500-call one. `render` turns a
 * page into text; `head` and `tail` frame the whole.
 */
function streamTrace(
  ledger: LedgerClient,
  tenant: string,
  render: (entries: TraceEntry[], first: boolean) => string,
  frame: { head: string; tail: string } = { head: "", tail: "" },
): ReadableStream<Uint8Array> {
  let cursor: number | null = 0;
  let first = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (frame.head) controller.enqueue(encoder.encode(frame.head));
    },
    async pull(controller) {
      if (cursor === null) {
        if (frame.tail) controller.enqueue(encoder.encode(frame.tail));
        controller.close();
        return;
      }
      const page = await ledger.readTracePage(tenant, cursor, EXPORT_PAGE);
      const entries = page?.entries ?? [];
      if (entries.length > 0) controller.enqueue(encoder.encode(render(entries, first)));
      first &&= entries.length === 0;
      cursor = page?.next_cursor ? Number(page.next_cursor) : null;
    },
  });
}

/** NDJSON: one trace entry per line. */
export function ndjsonExport(ledger: LedgerClient, tenant: string): ReadableStream<Uint8Array> {
  return streamTrace(ledger, tenant, (entries) =>
    entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""),
  );
}

/** OTLP/JSON: one document whose spans are written a page at a time. */
export function otlpExport(
  ledger: LedgerClient,
  tenant: string,
  runId: string,
  environment: string,
): ReadableStream<Uint8Array> {
  const traceId = otlpTraceId(runId);
  return streamTrace(
    ledger,
    tenant,
    (entries, first) =>
      `${first ? "" : ","}${entries.map((entry) => JSON.stringify(otlpSpan(traceId, entry))).join(",")}`,
    otlpFrame(runId, environment),
  );
}
