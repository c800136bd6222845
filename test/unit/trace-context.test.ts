import { describe, expect, it } from "vitest";
import { hexId, parseTraceparent, runTraceId, upstreamTraceparent } from "../../src/core/trace-context";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";

describe("W3C traceparent", () => {
  it("reads a version 00 traceparent, surrounding whitespace ignored", () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-01`)).toEqual({
      trace_id: TRACE,
      parent_id: PARENT,
      flags: "01",
    });
    expect(parseTraceparent(` 00-${TRACE}-${PARENT}-00 `)).toEqual({
      trace_id: TRACE,
      parent_id: PARENT,
      flags: "00",
    });
  });

  it("reads a later version by its first four fields, ignoring what follows", () => {
    expect(parseTraceparent(`01-${TRACE}-${PARENT}-01-what-comes-later`)).toEqual({
      trace_id: TRACE,
      parent_id: PARENT,
      flags: "01",
    });
  });

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["uppercase hex", `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${PARENT}-01`],
    ["an all-zero parent id", `00-${TRACE}-${"0".repeat(16)}-01`],
    ["version ff", `ff-${TRACE}-${PARENT}-01`],
    ["version 00 with more fields", `00-${TRACE}-${PARENT}-01-extra`],
    ["a short trace id", `00-${TRACE.slice(1)}-${PARENT}-01`],
    ["a non-hex flag", `00-${TRACE}-${PARENT}-0x`],
    ["a later version run on without a dash", `01-${TRACE}-${PARENT}-01x`],
    ["garbage", "not a traceparent"],
    ["too long", `00-${TRACE}-${PARENT}-01${" ".repeat(600)}`],
  ])("ignores %s", (_name, header) => {
    expect(parseTraceparent(header)).toBeNull();
  });

  it("propagates the caller's trace and flags upstream under the call's own span", () => {
    const caller = parseTraceparent(`00-${TRACE}-${PARENT}-00`);
    const header = upstreamTraceparent("run_1", "call_1", caller);
    const [version, trace, span, flags] = header.split("-");
    expect([version, trace, flags]).toEqual(["00", TRACE, "00"]);
    expect(span).toMatch(/^[0-9a-f]{16}$/);
    expect(span).not.toBe(PARENT);
    expect(upstreamTraceparent("run_1", "call_2", caller)).not.toBe(header);
  });

  it("puts a call without a caller's trace in the run's own trace, sampled", () => {
    expect(upstreamTraceparent("run_1", "call_1", null)).toMatch(
      new RegExp(`^00-${runTraceId("run_1")}-[0-9a-f]{16}-01$`),
    );
  });
});

describe("hex ids derived from run and call ids", () => {
  // The digits 64-bit FNV-1a gives for these inputs (computed in BigInt): exported traces keep their ids.
  it.each([
    ["run_01J9ZQ4X7Y8K2M3N4P5Q6R7S8T", 32, "8dc19c1b8e2116374a559978bf856064"],
    ["call_01J9ZQ4X7Y8K2M3N4P5Q6R7S8T", 16, "012e64fa283f95b2"],
    ["", 32, "07fc0e07b4bd112f6c0a37f9bab0f540"],
    ["émoji 🚀 ünïcode", 40, "9d7ac090fed3bd5d8417c551273e24ca0d502d92"],
  ])("derives the same id from %j (%i digits) as ever", (text, length, id) => {
    expect(hexId(text, length)).toBe(id);
  });
});
