import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runTraceId } from "../../src/core/trace-context";
import { callTool, openRun, sandboxRequests, type TestRun } from "./helpers";
import { bearer, connect, envelopeOf, rpc } from "./mcp-client";

/**
 * W3C Trace Context from the caller: the REST header `traceparent` and MCP's
 * `params._meta.traceparent` make the call's span a child of the caller's, and the upstream request
 * carries a traceparent of the same trace with the call's own span id. A malformed one is ignored.
 */

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";
const CALLER = `00-${TRACE}-${PARENT}-01`;
const UPSTREAM = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

async function spansOf(run: TestRun): Promise<Span[]> {
  const response = await exports.default.fetch(`https://proxy.test/v1/runs/${run.id}/trace?format=otlp`, {
    headers: { authorization: `Bearer ${run.token}` },
  });
  const otlp = (await response.json()) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Span[] }> }> };
  return otlp.resourceSpans[0]?.scopeSpans[0]?.spans ?? [];
}

/** The traceparent of every request the sandbox received for the run, as it logged them. */
async function upstreamTraceparents(run: TestRun): Promise<Array<string | null>> {
  return (await sandboxRequests(run.id)).map((entry) => entry.traceparent);
}

/** The one span and the one upstream request of a run that made one call, parsed. */
async function oneCall(run: TestRun) {
  const [span] = await spansOf(run);
  const [sent] = await upstreamTraceparents(run);
  const parsed = UPSTREAM.exec(sent ?? "");
  expect(parsed, `upstream traceparent ${sent}`).not.toBeNull();
  return { span, upstream: { trace: parsed?.[1], span: parsed?.[2], flags: parsed?.[3] } };
}

describe("traceparent over REST", () => {
  it("makes the call's span a child of the caller's and propagates the trace upstream under a new span id", async () => {
    const run = await openRun();
    const { status } = await callTool(run, "lookup_order", { order_id: "A1001" }, { traceparent: CALLER });
    expect(status).toBe(200);
    const { span, upstream } = await oneCall(run);
    expect(span?.traceId).toBe(TRACE);
    expect(span?.parentSpanId).toBe(PARENT);
    expect(upstream).toEqual({ trace: TRACE, span: span?.spanId, flags: "01" });
    expect(upstream.span).not.toBe(PARENT);
    const trace = await exports.default.fetch(`https://proxy.test/v1/runs/${run.id}/trace`, {
      headers: { authorization: `Bearer ${run.token}` },
    });
    const { data } = (await trace.json()) as { data: { entries: Array<{ traceparent?: unknown }> } };
    expect(data.entries[0]?.traceparent).toEqual({ trace_id: TRACE, parent_id: PARENT, flags: "01" });
  });

  it("carries the caller's trace to a write's upstream request too", async () => {
    const run = await openRun("initech");
    const { body } = await callTool(
      run,
      "create_internal_ticket",
      { customer_id: "C303", priority: "low", summary: "Trace context reaches the ticket API." },
      { traceparent: CALLER },
    );
    expect(body.outcome).toBe("success");
    const [span] = await spansOf(run);
    const sent = await upstreamTraceparents(run);
    // The write and its postcondition's read are both children of the call's span.
    expect(sent.length).toBeGreaterThanOrEqual(1);
    for (const header of sent) expect(header).toBe(`00-${TRACE}-${span?.spanId}-01`);
  });

  it.each([
    ["uppercase hex", `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${PARENT}-01`],
    ["version ff", `ff-${TRACE}-${PARENT}-01`],
    ["garbage", "trace me, please"],
  ])("ignores a traceparent with %s: the call succeeds in the run's own trace", async (_name, header) => {
    const run = await openRun();
    const { status, body } = await callTool(
      run,
      "lookup_order",
      { order_id: "A1001" },
      { traceparent: header },
    );
    expect(status).toBe(200);
    expect(body.outcome).toBe("success");
    const { span, upstream } = await oneCall(run);
    expect(span?.traceId).toBe(runTraceId(run.id));
    expect(span?.parentSpanId).toBeUndefined();
    expect(upstream).toEqual({ trace: runTraceId(run.id), span: span?.spanId, flags: "01" });
  });

  it("sends a call without one upstream in the run's own trace", async () => {
    const run = await openRun();
    await callTool(run, "lookup_order", { order_id: "A1001" });
    const { span, upstream } = await oneCall(run);
    expect(span?.parentSpanId).toBeUndefined();
    expect(upstream.trace).toBe(runTraceId(run.id));
  });
});

describe("traceparent over MCP", () => {
  it("reads params._meta.traceparent: the call's span is the caller's child and the upstream gets the trace", async () => {
    const run = await openRun();
    const { client } = await connect(run.token);
    const result = await client.callTool({
      name: "lookup_order",
      arguments: { order_id: "A1001" },
      _meta: { traceparent: CALLER },
    });
    expect(envelopeOf(result).outcome).toBe("success");
    await client.close();
    const { span, upstream } = await oneCall(run);
    expect(span?.traceId).toBe(TRACE);
    expect(span?.parentSpanId).toBe(PARENT);
    expect(upstream).toEqual({ trace: TRACE, span: span?.spanId, flags: "01" });
  });

  it("reads it on the 2025-06-18 revision's stateless run server too", async () => {
    const run = await openRun();
    const answer = await rpc(
      { ...bearer(run.token), "mcp-protocol-version": "2025-06-18" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "lookup_order", arguments: { order_id: "A1001" }, _meta: { traceparent: CALLER } },
      },
    );
    expect(answer.status, answer.text).toBe(200);
    const { span, upstream } = await oneCall(run);
    expect(span?.parentSpanId).toBe(PARENT);
    expect(upstream).toEqual({ trace: TRACE, span: span?.spanId, flags: "01" });
  });

  it("ignores a malformed _meta.traceparent, never an error", async () => {
    const run = await openRun();
    const { client } = await connect(run.token);
    const result = await client.callTool({
      name: "lookup_order",
      arguments: { order_id: "A1001" },
      _meta: { traceparent: `00-${TRACE}-${PARENT}` },
    });
    expect(envelopeOf(result).outcome).toBe("success");
    await client.close();
    const { span, upstream } = await oneCall(run);
    expect(span?.traceId).toBe(runTraceId(run.id));
    expect(span?.parentSpanId).toBeUndefined();
    expect(upstream.trace).toBe(runTraceId(run.id));
  });
});
