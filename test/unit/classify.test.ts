import { describe, expect, it } from "vitest";
import { classifyUpstream, parseRetryAfter, type UpstreamResult } from "../../src/upstream/classify";

const response = (
  status: number,
  body = "{}",
  contentType = "application/json",
  retryAfter: string | null = null,
): UpstreamResult => ({
  kind: "response",
  status,
  body,
  contentType,
  retryAfter,
});

function failureOf(result: UpstreamResult, sideEffect: "read" | "draft" | "write" | "destructive" = "read") {
  const classified = classifyUpstream(result, sideEffect, 0);
  if (classified.kind !== "failure") throw new Error("expected a failure");
  return classified;
}

describe("classifying upstream answers", () => {
  it("passes 2xx JSON on as success", () => {
    expect(classifyUpstream(response(201, '{"refund_id":"re_1"}'), "destructive")).toEqual({
      kind: "success",
      status: 201,
      body: { refund_id: "re_1" },
    });
  });

  it.each([
    [400, "validation_error", false],
    [422, "validation_error", false],
    [401, "permission_error", false],
    [403, "permission_error", false],
    [404, "not_found", false],
    [409, "conflict_error", false],
    [429, "rate_limited", true],
    [500, "transient_error", true],
    [502, "transient_error", true],
    [503, "transient_error", true],
    [418, "terminal_error", false],
  ])("maps %i to %s", (status, code, transient) => {
    const classified = failureOf(response(status));
    expect(classified.failure.code).toBe(code);
    expect(classified.transient).toBe(transient);
  });

  it("treats a 409 for an idempotency key still in use as 'not yet', not a conflict", () => {
    const classified = failureOf(
      response(409, '{"error":{"code":"idempotency_key_in_use","message":"busy"}}'),
      "write",
    );
    expect(classified.failure.code).toBe("transient_error");
    expect(classified.failure.side_effect_confirmed).toBeNull();
  });

  it("reads Retry-After in seconds and as an HTTP date", () => {
    expect(failureOf(response(429, "{}", "application/json", "3")).failure.retry_after_ms).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter("soon")).toBeNull();
  });

  it("marks the side effect of a failed write as unknown after a 5xx, a timeout or a lost connection", () => {
    expect(failureOf(response(502), "write").failure.side_effect_confirmed).toBeNull();
    expect(failureOf({ kind: "timeout" }, "destructive").failure.side_effect_confirmed).toBeNull();
    expect(failureOf({ kind: "network_error" }, "write").failure.side_effect_confirmed).toBeNull();
    expect(failureOf({ kind: "timeout" }, "read").failure.side_effect_confirmed).toBe(false);
  });

  it("treats a 2xx that is not JSON, or malformed JSON, as terminal", () => {
    expect(failureOf(response(200, "<html>ok</html>", "text/html")).failure.code).toBe("terminal_error");
    expect(failureOf(response(200, '{"order_id": "A10', "application/json")).failure.code).toBe(
      "terminal_error",
    );
    expect(failureOf(response(200, "{}", "text/html"), "write").failure.recommended_next_action).toBe(
      "reconcile",
    );
  });

  it("never copies an upstream message into the envelope, only a well-formed code", () => {
    const body = JSON.stringify({
      error: { code: "amount_exceeds_refundable", message: "at db-7.corp.local: SELECT *" },
    });
    const classified = failureOf(response(422, body));
    expect(JSON.stringify(classified)).not.toMatch(/corp\.local|SELECT/);
    expect(classified.failure.details).toEqual({
      upstream_status: 422,
      upstream_code: "amount_exceeds_refundable",
    });
    const hostile = failureOf(response(422, JSON.stringify({ error: { code: "x; DROP TABLE refunds" } })));
    expect(hostile.failure.details).toEqual({ upstream_status: 422 });
  });

  it("refuses an answer past a bound as upstream_too_large, naming the bound and its value", () => {
    const exceeded = { bound: "bytes", max: 8 * 1024 * 1024 } as const;
    const read = failureOf({ kind: "too_large", status: 200, exceeded });
    expect(read.transient).toBe(false);
    expect(read.failure).toMatchObject({
      code: "upstream_too_large",
      side_effect_confirmed: false,
      details: { limit: "bytes", max: 8 * 1024 * 1024, upstream_status: 200 },
    });
    expect(read.failure.message).not.toMatch(/call again with|retry/i);
    // A write's upstream ran before it answered: whether it acted is unknown, never "not done".
    const write = classifyUpstream({ kind: "too_large", status: 200, exceeded }, "write");
    expect(write.kind === "failure" && write.failure.side_effect_confirmed).toBeNull();
    expect(write.kind === "failure" && write.failure.recommended_next_action).toBe("reconcile");
  });
});
