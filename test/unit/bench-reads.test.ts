import { describe, expect, it } from "vitest";
import { READ_ORDERS } from "../../bench/workload.mjs";
import { LOAD_TEST_ORDERS } from "../../sandbox/src/seed";
import { RECENT_CREDENTIALS_MAX } from "../../src/upstream/authorize";

describe("the bench's reads", () => {
  it("name more orders than the proxy keeps signed credentials for, so each read signs its own as a new request does", () => {
    // The proxy reuses a credential it signed a moment ago for the identical request, and forgets
    // them all once it holds RECENT_CREDENTIALS_MAX: reads cycling over more orders never reuse one.
    expect(READ_ORDERS).toBeGreaterThan(RECENT_CREDENTIALS_MAX);
  });

  it("name only orders the sandbox seeds for the load-test tenant", () => {
    expect(READ_ORDERS).toBeLessThanOrEqual(LOAD_TEST_ORDERS);
  });
});
