import { callSpanId, runTraceId } from "../core/trace-context";
import type { TraceEntry } from "../wire/trace-entry";

/**
 * Renders a run's trace as OTLP/JSON spans following the OpenTelemetry GenAI conventions: one
 * `execute_tool` span per dispatch, all in one trace per run.
 */

type OtlpValue = { stringValue: string } | { intValue: string } | { boolValue: boolean };
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

function attribute(key: string, value: string | number | boolean): OtlpAttribute {
  if (typeof value === "boolean") return { key, value: { boolValue: value } };
  if (typeof value === "number") return { key, value: { intValue: String(Math.trunc(value)) } };
  return { key, value: { stringValue: value } };
}

const toNanos = (iso: string) => `${BigInt(Date.parse(iso)) * 1_000_000n}`;

/**
 * One dispatch as an `execute_tool` span of the run's trace, or, when the caller sent a W3C
 * `traceparent`, of the caller's trace, as a child of the caller's span.
 */
export function otlpSpan(traceId: string, entry: TraceEntry) {
  const attributes = [
    attribute("gen_ai.operation.name", "execute_tool"),
    attribute("gen_ai.tool.name", entry.tool ?? "unknown"),
    attribute("gen_ai.tool.call.id", entry.call_id),
    attribute("gen_ai.tool.type", "function"),
    attribute("tool.outcome", entry.outcome),
    attribute("tool.replayed", entry.replayed),
    attribute("tool.catalog_version", entry.catalog_version),
  ];
  if (entry.side_effect) attributes.push(attribute("tool.side_effect", entry.side_effect));
  if (entry.error_code) attributes.push(attribute("error.type", entry.error_code));
  if (entry.upstream_status !== null) {
    attributes.push(attribute("http.response.status_code", entry.upstream_status));
  }
  if (entry.idempotency_key) attributes.push(attribute("tool.idempotency_key", entry.idempotency_key));
  const checks = entry.upstream_attempts.filter((a) => a.purpose === "check").length;
  attributes.push(attribute("tool.upstream_attempts", entry.upstream_attempts.length - checks));
  if (checks > 0) attributes.push(attribute("tool.postcondition_checks", checks));
  const parent = entry.traceparent ?? null;
  return {
    traceId: parent?.trace_id ?? traceId,
    spanId: callSpanId(entry.call_id),
    ...(parent ? { parentSpanId: parent.parent_id } : {}),
    name: `execute_tool ${entry.tool ?? "unknown"}`,
    kind: 1,
    startTimeUnixNano: toNanos(entry.started_at),
    endTimeUnixNano: toNanos(entry.ended_at ?? entry.started_at),
    attributes,
    status: entry.error_code ? { code: 2, message: entry.error_code } : { code: 1 },
  };
}

/** The run's trace id: every span of a run belongs to one trace. */
export const otlpTraceId = runTraceId;

export function traceToOtlp(runId: string, entries: readonly TraceEntry[], environment: string) {
  const traceId = otlpTraceId(runId);
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [
            attribute("service.name", "edge-tool-proxy"),
            attribute("deployment.environment.name", environment),
            attribute("gen_ai.conversation.id", runId),
          ],
        },
        scopeSpans: [
          {
            scope: { name: "edge-tool-proxy.run-ledger" },
            spans: entries.map((entry) => otlpSpan(traceId, entry)),
          },
        ],
      },
    ],
  };
}

/**
 * The OTLP/JSON document around its spans, as two pieces of text, so an export can stream spans
 * between them a page at a time: `head + spans.join(",") + tail` is `traceToOtlp`'s JSON.
 */
export function otlpFrame(runId: string, environment: string): { head: string; tail: string } {
  const empty = JSON.stringify(traceToOtlp(runId, [], environment));
  const marker = '"spans":[]';
  const at = empty.indexOf(marker);
  return { head: empty.slice(0, at + marker.length - 1), tail: empty.slice(at + marker.length - 1) };
}
