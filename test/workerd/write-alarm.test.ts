import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { RETENTION_MS } from "../../src/ledger/run-ledger";
import {
  callTool,
  deliverUncalledRun,
  ledgerStubOf,
  openRun,
  recordAlarmSets,
  type TestRun,
} from "./helpers";

/**
 * A write's alarm: set before its send leaves (so a send a restart cuts off is still reconciled, and
 * the fate its admission stored for the tenant's effect shards is still delivered), and set back to
 * the run's deletion once the outcome is delivered. The guard of that delivery finds the alarm
 * already set to ring soon enough and leaves it: two alarm writes per write, not three.
 */

const alarmOf = (run: TestRun) =>
  runInDurableObject(ledgerStubOf(run), (_instance, state) => state.storage.getAlarm());

const outboxRows = (run: TestRun) =>
  runInDurableObject(ledgerStubOf(run), (_instance, state) =>
    Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM outbox").one().n),
  );

describe("the alarm of a run's write", () => {
  it("is set before the send and back to the run's deletion after its delivery: twice per write", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { deadline_s: 600 } });
    const deletion = Date.parse(String(run.data.deadline_at)) + RETENTION_MS;
    const settled = async () => {
      await vi.waitFor(
        async () => {
          expect(await outboxRows(run)).toBe(0);
          expect(await alarmOf(run)).toBe(deletion);
        },
        { timeout: 5_000, interval: 20 },
      );
    };
    // The run's entry, waiting for a first call, delivered by the alarm: the writes start from a run at rest.
    await deliverUncalledRun(run);
    await settled();
    const sets = await recordAlarmSets(run);
    for (const summary of ["The first ticket of a row of writes.", "The second ticket of the row."]) {
      const before = Date.now();
      const answer = await callTool(run, "create_internal_ticket", {
        customer_id: "C100",
        priority: "low",
        summary,
      });
      expect(answer.body.outcome, JSON.stringify(answer.body.error)).toBe("success");
      await settled();
      const set = await sets();
      // The send's alarm rang soon after it left; the last one is the run's deletion again.
      expect(set.at(-2) as number).toBeGreaterThanOrEqual(before);
      expect(set.at(-2) as number).toBeLessThan(before + 60_000);
      expect(set.at(-1)).toBe(deletion);
    }
    expect(await sets()).toHaveLength(4);
  });
});
