import { describe, expect, it } from "vitest";
import type { CallRecord } from "../../agents/client";
import { faultsServed, fixtureDefects, unservedFaults } from "../../eval/faults-served";
import type { AdminRequest } from "../../eval/source-types";

/** A planted fault counts only once the sandbox's own request log shows it served to its target. */

let seq = 0;
const request = (tool: string, path: string, fault: AdminRequest["fault"]): AdminRequest => ({
  seq: ++seq,
  at: "2026-01-01T00:00:00.000Z",
  tenant: "globex",
  run_id: "run_1",
  tool,
  method: tool.startsWith("lookup") ? "GET" : "POST",
  path,
  idempotency_key: null,
  traceparent: null,
  fault,
  status: 200,
  phase: "completed",
});

const called = (tool: string): CallRecord =>
  ({ n: 1, tool, args: {}, intent: null, http_status: 200, started_at: "", ms: 1 }) as unknown as CallRecord;

describe("faults served", () => {
  it("counts a step served when a request to its tool suffered its mode", () => {
    const served = faultsServed(
      [{ mode: "html", tool: "issue_refund" }],
      [request("lookup_order", "/orders/B2116", null), request("issue_refund", "/refunds", "html")],
      [called("issue_refund")],
    );
    expect(served).toEqual([{ mode: "html", target: "issue_refund", wanted: 1, served: 1, called: true }]);
    expect(unservedFaults(served)).toEqual([]);
  });

  it("names a fault never served though the agent made its call: a defect of the case", () => {
    // The refund waited for a human and was rejected: its request never left.
    const served = faultsServed(
      [{ mode: "silent_failure", tool: "issue_refund" }],
      [],
      [called("issue_refund"), called("issue_refund")],
    );
    expect(fixtureDefects(served)).toBe(1);
    expect(unservedFaults(served)).toEqual([
      "planted fault silent_failure on issue_refund was served 0 of 1 time(s): the agent called it, but its request never reached the upstream as planted (a defect of the case)",
    ]);
  });

  it("tells a fault the agent never gave a chance apart: the case fails, the evaluation is not at fault", () => {
    const served = faultsServed(
      [{ mode: "bad_gateway", tool: "issue_refund" }],
      [],
      [called("lookup_order")],
    );
    expect(fixtureDefects(served)).toBe(0);
    expect(unservedFaults(served)).toEqual([
      "planted fault bad_gateway on issue_refund was served 0 of 1 time(s): the agent never called it",
    ]);
  });

  it("needs a request per step, in order, and as many as a step's times; another tool's or mode's do not count", () => {
    const requests = [
      request("lookup_order", "/orders/B2111", "hang"),
      request("lookup_order", "/orders/B2111", "stale"),
      request("issue_refund", "/refunds", "stale"),
      request("search_refund_policy", "/refund-policies?q=x", "injection"),
    ];
    const served = faultsServed(
      [
        { mode: "hang", tool: "lookup_order", hang_ms: 0 },
        { mode: "stale", tool: "lookup_order" },
        { mode: "stale", tool: "lookup_order" },
        { mode: "rate_limited", path_prefix: "/refunds", times: 2 },
        { mode: "injection" },
      ],
      requests,
      [called("lookup_order")],
    );
    expect(served.map((step) => [step.target, step.served, step.wanted])).toEqual([
      ["lookup_order", 1, 1],
      ["lookup_order", 1, 1],
      ["lookup_order", 0, 1],
      ["path_prefix /refunds", 0, 2],
      ["any request", 1, 1],
    ]);
  });

  it("counts a request the log holds twice (started, then completed) once", () => {
    const once = request("issue_refund", "/refunds", "bad_gateway");
    const served = faultsServed(
      [{ mode: "bad_gateway", tool: "issue_refund", times: 2 }],
      [once, { ...once, phase: "started" }],
      [called("issue_refund")],
    );
    expect(served[0]?.served).toBe(1);
  });
});
