import { describe, expect, it } from "vitest";
import { RETENTION_MS } from "../../src/machine/run-events";
import { runLimitsSchema } from "../../src/wire/run-status";

describe("a reserved MCP session run is never opened twice", () => {
  // A session may open its reserved run until its deadline (at most the longest run after
  // initialize); a run that was opened and ended must still be known to its ledger until then,
  // or the session would find no run and open it again.
  it("keeps a run's data at least as long as the longest run a session may reserve", () => {
    const longest = runLimitsSchema().shape.deadline_s.maxValue;
    expect(longest).not.toBeNull();
    expect(RETENTION_MS).toBeGreaterThanOrEqual((longest ?? Number.POSITIVE_INFINITY) * 1000);
  });
});
