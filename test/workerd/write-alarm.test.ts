import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { RETENTION_MS } from "../../src/ledger/run-ledger";
import { RECONCILE_AFTER_MS } from "../../src/machine/run-events";
import {
  callTool,
  deliverUncalledRun,
  ledgerStubOf,
  openRun,
  outboxTopicsOf,
  recordAlarmSets,
  type TestRun,
  withHeldTimers,
} from "./helpers";

/**
 * A write's alarm: set before its send leaves, so a send a restart cuts off is still reconciled
 * (and the fate its admission stored for the tenant's effect shards is still delivered). The first
 * send in flight asks for that reconciliation, and the alarm keeps it until it rings: a write sent
 * before then is covered by it, so a row of writes moves the alarm for its first write only (twice
 * when that write is news for the run's entry, whose delivery asks for an alarm of its own), not
 * twice per write. The ring finds nothing cut off and sets the run's deletion.
 */

const alarmOf = (run: TestRun) =>
  runInDurableObject(ledgerStubOf(run), (_instance, state) => state.storage.getAlarm());

const outboxRows = (run: TestRun) =>
  runInDurableObject(ledgerStubOf(run), (_instance, state) =>
    Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM outbox").one().n),
  );

describe("the alarm of a run's writes", () => {
  it("is set once for a row of writes, to the first send's reconciliation, whose ring sets the run's deletion", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { deadline_s: 600 } });
    const deletion = Date.parse(String(run.data.deadline_at)) + RETENTION_MS;
    // The run's entry, waiting for a first call, delivered by the alarm: the writes start from a run at rest.
    await deliverUncalledRun(run);
    await vi.waitFor(
      async () => {
        expect(await outboxRows(run)).toBe(0);
        expect(await alarmOf(run)).toBe(deletion);
      },
      { timeout: 5_000, interval: 20 },
    );
    const sets = await recordAlarmSets(run);
    const write = async (summary: string) => {
      const answer = await callTool(run, "create_internal_ticket", {
        customer_id: "C100",
        priority: "low",
        summary,
      });
      expect(answer.body.outcome, JSON.stringify(answer.body.error)).toBe("success");
      // A write's answer waits for its delivery: its effect's fate is with the shards already. Its
      // row is deleted with the run's next commit (with the timers held, nothing else deletes it),
      // and the write before it's went with this one's.
      const topics = await outboxTopicsOf(run);
      expect(topics).toContain(`effect:${answer.body.idempotency_key}`);
      // Its receipt for the audit log was delivered with it, and goes with the next commit likewise.
      const owed = topics.filter((topic) => topic !== `run:${run.id}`);
      expect(owed.filter((topic) => !topic.startsWith("audit:"))).toEqual([
        `effect:${answer.body.idempotency_key}`,
      ]);
      expect(owed.filter((topic) => topic.startsWith("audit:"))).toHaveLength(1);
    };
    // Held, a delivered row's own deletion (ACKNOWLEDGED_DELETE_AFTER_MS later) cannot race the checks.
    await withHeldTimers(async () => {
      const before = Date.now();
      await write("The first ticket of a row of writes.");
      const afterFirst = await sets();
      const reconcile = afterFirst.at(-1) as number;
      expect(reconcile).toBeGreaterThanOrEqual(before + RECONCILE_AFTER_MS);
      expect(reconcile).toBeLessThanOrEqual(Date.now() + RECONCILE_AFTER_MS);
      // The second write, sent before that ring, is covered by it: the alarm is not moved at all.
      await write("The second ticket of the row.");
      await write("The third ticket of the row.");
      expect(await sets()).toEqual(afterFirst);
      expect(await alarmOf(run)).toBe(reconcile);

      // The reconciliation rings (now, early): nothing was cut off, and the one alarm left is the deletion.
      expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
      expect(await outboxRows(run)).toBe(0);
      expect(await alarmOf(run)).toBe(deletion);
      expect(await sets()).toEqual([...afterFirst, deletion]);
    });
  });
});
