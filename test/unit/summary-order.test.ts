import { describe, expect, it } from "vitest";
import { isOlderSummary, type SummaryPosition } from "../../src/approvals/model";

/**
 * The directory's copy of an approval only moves forward along its path: state, then (while it is
 * pending and needs two operators) how many approved, then when it was decided.
 */

const at = (state: SummaryPosition["state"], approved = 0, decided_at: string | null = null) => ({
  state,
  approved,
  decided_at,
});

describe("which approval summary is older", () => {
  it("takes a pending copy with fewer approvals as older, and one with more as newer", () => {
    expect(isOlderSummary(at("pending", 0), at("pending", 1))).toBe(true);
    expect(isOlderSummary(at("pending", 1), at("pending", 0))).toBe(false);
  });

  it("takes the same copy again as not older, so applying it twice changes nothing", () => {
    expect(isOlderSummary(at("pending", 1), at("pending", 1))).toBe(false);
    expect(
      isOlderSummary(
        at("executed", 2, "2026-01-01T00:00:01.000Z"),
        at("executed", 2, "2026-01-01T00:00:01.000Z"),
      ),
    ).toBe(false);
  });

  it("orders by state before approvals: a 1 of 2 pending copy never replaces a decision", () => {
    expect(isOlderSummary(at("pending", 1), at("rejected", 0, "2026-01-01T00:00:00.000Z"))).toBe(true);
    expect(isOlderSummary(at("rejected", 1, "2026-01-01T00:00:00.000Z"), at("pending", 1))).toBe(false);
    expect(
      isOlderSummary(
        at("approved", 2, "2026-01-01T00:00:00.000Z"),
        at("executed", 2, "2026-01-01T00:00:00.000Z"),
      ),
    ).toBe(true);
  });

  it("orders the same state and approvals by when it was decided", () => {
    expect(
      isOlderSummary(
        at("rejected", 0, "2026-01-01T00:00:00.000Z"),
        at("rejected", 0, "2026-01-01T00:00:05.000Z"),
      ),
    ).toBe(true);
  });
});
