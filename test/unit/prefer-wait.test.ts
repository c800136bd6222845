import { describe, expect, it } from "vitest";
import { MAX_WAIT_S, preferredWaitMs } from "../../src/door/prefer-wait";
import { ApprovalWaiters } from "../../src/ledger/approval-waiters";

describe("Prefer: wait", () => {
  it("reads wait among other preferences, bounds it, and ignores a header without it", () => {
    expect(preferredWaitMs(undefined)).toEqual({ ok: true, ms: 0 });
    expect(preferredWaitMs("return=minimal")).toEqual({ ok: true, ms: 0 });
    expect(preferredWaitMs("respond-async, wait=10")).toEqual({ ok: true, ms: 10_000 });
    expect(preferredWaitMs('Wait="5"')).toEqual({ ok: true, ms: 5_000 });
    expect(preferredWaitMs("wait=3600")).toEqual({ ok: true, ms: MAX_WAIT_S * 1_000 });
  });

  it("refuses a wait that is not a whole number of seconds, naming the header", () => {
    for (const header of ["wait=soon", "wait=-1", "wait=2.5", "wait=", "wait"]) {
      const read = preferredWaitMs(header);
      expect(read.ok, header).toBe(false);
      if (!read.ok) expect(read.problems[0]?.field).toBe("Prefer");
    }
  });
});

describe("waiting for an approval's decision", () => {
  it("wakes every waiter of that approval only, and lets the others run out", async () => {
    const waiters = new ApprovalWaiters();
    const a = [waiters.wait("apr_a", 5_000), waiters.wait("apr_a", 5_000)];
    const b = waiters.wait("apr_b", 20);
    waiters.wake("apr_a");
    expect(await Promise.all(a)).toEqual([true, true]);
    expect(await b).toBe(false);
    expect(await waiters.wait("apr_c", 0)).toBe(false);
  });
});
