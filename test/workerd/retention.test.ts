import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { EFFECT_WINDOW_MS } from "../../src/catalog/effect-rules";
import { OPENED_ENTRY_WAIT_MS } from "../../src/ledger/run-index";
import { RETENTION_MS } from "../../src/ledger/run-ledger";
import {
  asOperator,
  callTool,
  deliverUncalledRun,
  ledgerStubOf,
  openRun,
  request,
  type TestRun,
  withPendingOpen,
} from "./helpers";

/**
 * A task's run, stored at its open (its token carries no open to create it from): these tests move
 * the stored clock past retention, which a token's own clock does not follow. A run whose open
 * stored nothing is created only before the deadline its token carries (the last test).
 */
const openStoredRun = (limits: Record<string, number> = {}) =>
  openRun("acme", { namespace: "support", limits, task_key: `retention-${crypto.randomUUID()}` });

const statusCode = async (run: TestRun) =>
  (await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } })).status;

describe("retention of a run's data", () => {
  it("schedules deletion 24 h after the run ends and keeps everything until then", async () => {
    const run = await openRun("acme");
    await callTool(run, "lookup_order", { order_id: "A1001" });
    await request(`/v1/runs/${run.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.token}` },
    });
    const alarm = await runInDurableObject(ledgerStubOf(run), (_instance, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThanOrEqual(Date.now() + RETENTION_MS - 5_000);

    // Firing early (e.g. a rescheduled alarm) must not delete anything.
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    expect(await statusCode(run)).toBe(200);
  });

  it("deletes keys, results and trace once the window has passed", async () => {
    const run = await openStoredRun();
    await callTool(run, "create_internal_ticket", {
      customer_id: "C100",
      priority: "low",
      summary: "Old run that should be cleaned up.",
    });
    await request(`/v1/runs/${run.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.token}` },
    });
    // The run ended more than 24 h ago; its alarm (set at end) fires now.
    await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      state.storage.sql.exec("UPDATE run SET ended_at = ?", Date.now() - RETENTION_MS - 1_000);
    });
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    expect(await statusCode(run)).toBe(404);
    const tables = await runInDurableObject(ledgerStubOf(run), (_instance, state) =>
      state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('trace', 'idempotency')")
        .toArray(),
    );
    expect(tables).toEqual([]);
  });

  it("lists a run that never calls, keeps it until a day after its deadline, then deletes it", async () => {
    const run = await openStoredRun({ deadline_s: 60 });
    const deadline = Date.parse(String(run.data.deadline_at));
    const alarmOf = () =>
      runInDurableObject(ledgerStubOf(run), (_instance, state) => state.storage.getAlarm());
    const listed = async () => {
      const { body } = await asOperator("/v1/runs?state=all&limit=100");
      return (body.data as { runs: Array<{ run_id: string }> }).runs.map((entry) => entry.run_id);
    };
    // The run's entry waits for a first call that does not come: the alarm, set for when the entry
    // stops waiting, delivers it. Once the directory has it, the one alarm left is the run's deletion.
    expect(await alarmOf()).toBe(Date.parse(String(run.data.created_at)) + OPENED_ENTRY_WAIT_MS);
    await deliverUncalledRun(run);
    expect(await listed()).toContain(run.id);
    expect(await alarmOf()).toBe(deadline + RETENTION_MS);
    // An alarm that rings early deletes nothing and is set again.
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    expect(await statusCode(run)).toBe(200);
    expect(await alarmOf()).toBe(deadline + RETENTION_MS);

    await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      state.storage.sql.exec("UPDATE run SET deadline_at = ?", Date.now() - RETENTION_MS - 1_000);
    });
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    expect(await statusCode(run)).toBe(404);
    // What is left is the mark that its id was taken, deleted once the longest effect window passed.
    expect(await alarmOf()).toBeGreaterThanOrEqual(Date.now() + EFFECT_WINDOW_MS.max - 60_000);
  });

  it("answers a call that arrives while retention deletes the run, and a call after it, without a schema left half made", async () => {
    const run = await openStoredRun({ deadline_s: 60 });
    expect((await callTool(run, "lookup_order", { order_id: "A1001" })).body.outcome).toBe("success");
    await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      state.storage.sql.exec("UPDATE run SET deadline_at = ?", Date.now() - RETENTION_MS - 1_000);
    });
    // The call races the deletion. Served before it, the call finds the run past its deadline
    // (budget_exhausted); served after it, the run is gone.
    const [rang, during] = await Promise.all([
      runDurableObjectAlarm(ledgerStubOf(run)),
      callTool(run, "lookup_order", { order_id: "A1002" }),
    ]);
    expect(rang).toBe(true);
    expect(during.body.error?.code ?? "success", JSON.stringify(during.body.error)).toMatch(
      /^(budget_exhausted|not_found|run_not_found|unauthorized)$/,
    );
    const after = await callTool(run, "lookup_order", { order_id: "A1003" });
    expect(after.body.outcome).toBe("terminal_failure");
    expect(after.body.error?.code).not.toBe("internal_error");
    expect(await statusCode(run)).toBe(404);
    // Whatever the calls left, no run is stored and a later alarm finds nothing to do.
    const runs = await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      const tables = state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'run'")
        .toArray();
      return tables.length === 0
        ? 0
        : Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM run").one().n);
    });
    expect(runs).toBe(0);
  });

  it("creates no run from a token whose open stored nothing once its deadline has passed", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { deadline_s: 60 } });
    // The same open, made 61 s ago: its deadline has passed, and a run it named may have been
    // ended and deleted since. Its token still lives (the grace after the deadline).
    const late = await withPendingOpen(run, { at: Date.now() - 61_000 });
    expect(await statusCode(late)).toBe(404);
    // Refused as the run would refuse a call past its deadline, naming it.
    const call = await callTool(late, "lookup_order", { order_id: "A1001" });
    expect(call.body.outcome).toBe("terminal_failure");
    expect(call.body.error).toMatchObject({ code: "budget_exhausted", details: { limit: "deadline" } });
    expect(call.body.error?.message).toContain("60s deadline");
    // Nothing is left behind: not a run, not an empty schema, not an alarm.
    const stored = await runInDurableObject(ledgerStubOf(run), async (_instance, state) => ({
      tables: state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray(),
      alarm: await state.storage.getAlarm(),
    }));
    expect(stored).toEqual({ tables: [], alarm: null });
    // Before its deadline the same run is created by its first request, at its open's time.
    expect(await statusCode(run)).toBe(200);
  });
});
