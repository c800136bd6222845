import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { taskRunId } from "../../src/core/ids";
import { type DirectoryMessage, Outbox } from "../../src/ledger/outbox";
import { OPENED_ENTRY_WAIT_MS } from "../../src/ledger/run-index";
import { RETENTION_MS } from "../../src/ledger/run-ledger";
import type { RunSummary } from "../../src/wire/run-summary";
import {
  asOperator,
  callTool,
  deliverUncalledRun,
  ledgerStubOf,
  openRun,
  recordAlarmSets,
  request,
  type TestRun,
} from "./helpers";

/**
 * What opening a run costs its new ledger, counted in SQL statements: a fresh object asks once
 * whether it holds a schema, creates it in one script, and writes the run and its directory entry,
 * which its first call's delivery carries (or its alarm's, when no call comes); the outbox's state
 * is known without reading it back.
 */

/** The test's own look at the outbox, left out of what `recordStatements` reports. */
const PROBE = "SELECT COUNT(*) AS n FROM outbox";

/** Records every SQL statement the run's ledger runs from now on (whitespace collapsed). */
async function recordStatements(run: TestRun): Promise<() => Promise<string[]>> {
  await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
    const sql = state.storage.sql as SqlStorage & { seen?: string[] };
    const exec = sql.exec.bind(sql);
    sql.seen = [];
    sql.exec = ((query: string, ...bindings: SqlStorageValue[]) => {
      sql.seen?.push(query.replace(/\s+/g, " ").trim());
      return exec(query, ...bindings);
    }) as typeof sql.exec;
  });
  return () =>
    runInDurableObject(ledgerStubOf(run), (_instance, state) =>
      ((state.storage.sql as SqlStorage & { seen?: string[] }).seen ?? []).filter(
        (statement) => statement !== PROBE,
      ),
    );
}

const outboxRows = (run: TestRun) =>
  runInDurableObject(ledgerStubOf(run), (_instance, state) => state.storage.sql.exec(PROBE).one().n);

describe("opening a run", () => {
  it("stores nothing for an open without a task key: its first call creates the run, its entry and its alarm", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { deadline_s: 60 } });
    const storage = () =>
      runInDurableObject(ledgerStubOf(run), async (_instance, state) => ({
        tables: state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray(),
        alarm: await state.storage.getAlarm(),
      }));
    // Opened: no table, no alarm, and the directory does not know the run.
    expect(await storage()).toEqual({ tables: [], alarm: null });
    const listed = async () => {
      const { body } = await asOperator("/v1/runs?state=all&limit=100");
      return (body.data as { runs: RunSummary[] }).runs.find((entry) => entry.run_id === run.id);
    };
    expect(await listed()).toBeUndefined();
    // Its first call creates it as the open would have, and one delivery carries its entry.
    const statements = await recordStatements(run);
    const call = await callTool(run, "lookup_order", { order_id: "A1002" });
    expect(call.body.outcome, JSON.stringify(call.body.error)).toBe("success");
    await vi.waitFor(async () => expect(await outboxRows(run)).toBe(0), { timeout: 5_000, interval: 20 });
    const seen = await statements();
    expect(seen.filter((statement) => statement.startsWith("CREATE TABLE IF NOT EXISTS run"))).toHaveLength(
      1,
    );
    expect(seen.filter((statement) => statement.startsWith("DELETE FROM outbox"))).toHaveLength(1);
    expect(await listed()).toMatchObject({
      created_at: run.data.created_at,
      deadline_at: run.data.deadline_at,
      tools: ["lookup_order"],
      subjects: ["order_id=A1002"],
    });
    expect((await storage()).alarm).toBe(Date.parse(String(run.data.deadline_at)) + RETENTION_MS);
  });

  it("creates the schema without asking twice, and leaves its directory entry for the first call to carry", async () => {
    const taskKey = "open-work-1";
    // The run's id follows from its task key, so its ledger can be watched before it is opened.
    const planned: TestRun = { id: await taskRunId("acme", taskKey), token: "", tenant: "acme", data: {} };
    const statements = await recordStatements(planned);
    const run = await openRun("acme", {
      namespace: "support",
      task_key: taskKey,
      limits: { deadline_s: 60 },
    });
    expect(run.id).toBe(planned.id);
    const kinds = async () => (await statements()).map((statement) => statement.slice(0, 30));
    // The open writes the run and its entry, and delivers nothing: the entry waits in the outbox.
    expect(await kinds()).toEqual([
      "CREATE TABLE IF NOT EXISTS run",
      "INSERT INTO run (id, tenant, r",
      "INSERT INTO task (id, task_key",
      "INSERT INTO outbox (topic, seq",
    ]);
    expect(await outboxRows(run)).toBe(1);
    // Stored with it, the alarm that delivers the entry if no call comes in time.
    const alarmOf = () =>
      runInDurableObject(ledgerStubOf(run), (_instance, state) => state.storage.getAlarm());
    expect(await alarmOf()).toBe(Date.parse(String(run.data.created_at)) + OPENED_ENTRY_WAIT_MS);

    // The first call rewrites the entry (the tool it named, its subject), and one delivery carries both.
    const alarmSets = await recordAlarmSets(run);
    const call = await callTool(run, "lookup_order", { order_id: "A1002" });
    expect(call.body.outcome, JSON.stringify(call.body.error)).toBe("success");
    await vi.waitFor(async () => expect(await outboxRows(run)).toBe(0), { timeout: 5_000, interval: 20 });
    const seen = await statements();
    expect(seen.filter((statement) => statement.startsWith("INSERT INTO outbox"))).toHaveLength(2);
    expect(seen.filter((statement) => statement.startsWith("SELECT topic, seq, message"))).toHaveLength(1);
    expect(seen.filter((statement) => statement.startsWith("DELETE FROM outbox"))).toHaveLength(1);
    const { body } = await asOperator("/v1/runs?state=all&limit=100");
    expect((body.data as { runs: RunSummary[] }).runs.find((entry) => entry.run_id === run.id)).toMatchObject(
      {
        tools: ["lookup_order"],
        subjects: ["order_id=A1002"],
      },
    );
    // Once the entry is delivered, the one alarm left is the run's deletion. The open's alarm, due
    // within GUARD_SLACK_MS of the delivery's retry, guarded the delivery: the call set no other.
    const deletion = Date.parse(String(run.data.deadline_at)) + RETENTION_MS;
    expect(await alarmOf()).toBe(deletion);
    expect(await alarmSets()).toEqual([deletion]);
  });

  it("enqueues a delivered run's next entry without reading its outbox back", async () => {
    const run = await openRun("acme", { namespace: "support", task_key: "open-work-2" });
    await deliverUncalledRun(run);
    await vi.waitFor(async () => expect(await outboxRows(run)).toBe(0), { timeout: 5_000, interval: 20 });
    const statements = await recordStatements(run);
    // Ending the run enqueues its entry again; the outbox, emptied by the delivery, is known empty.
    const ended = await request(`/v1/runs/${run.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.token}` },
    });
    expect(ended.status).toBe(200);
    await vi.waitFor(async () => expect(await outboxRows(run)).toBe(0), { timeout: 5_000, interval: 20 });
    const seen = await statements();
    expect(seen.filter((statement) => statement.startsWith("SELECT message FROM outbox"))).toEqual([]);
    expect(seen.filter((statement) => statement.startsWith("SELECT MIN(next_attempt_at)"))).toEqual([]);
  });
});

/** A run entry for topic `run:<id>`: what the outbox keys and merges by. */
const entryOf = (id: string, tools: string[]): DirectoryMessage =>
  ({ kind: "run", entry: { run_id: id, tools, subjects: [] } }) as unknown as DirectoryMessage;

/**
 * Runs `use` on an outbox of its own over an emptied ledger's table, as a fresh instance would have
 * it (knowing nothing), with that table's SQL.
 */
async function onEmptiedOutbox<T>(use: (outbox: Outbox, sql: SqlStorage) => T): Promise<T> {
  const run = await openRun("acme");
  await deliverUncalledRun(run);
  await vi.waitFor(async () => expect(await outboxRows(run)).toBe(0), { timeout: 5_000, interval: 20 });
  return runInDurableObject(ledgerStubOf(run), (_instance, state) =>
    use(new Outbox(state.storage.sql), state.storage.sql),
  );
}

describe("what the outbox knows without reading itself", () => {
  it("knows it is empty only when a delivery removed every message it read and none came since", async () => {
    const answers = await onEmptiedOutbox((outbox, sql) => {
      const now = Date.now();
      outbox.enqueue(entryOf("a", ["x"]), now);
      const first = outbox.undelivered();
      // A new topic while the delivery is under way: it is still owed after the first is acknowledged.
      outbox.enqueue(entryOf("b", ["y"]), now);
      for (const row of first) outbox.acknowledge(row);
      const afterNewTopic = outbox.nextAttemptAt();
      const second = outbox.undelivered();
      // The same topic again while its delivery is under way: its newer message stays, merged.
      outbox.enqueue(entryOf("b", ["z"]), now);
      for (const row of second) outbox.acknowledge(row);
      const afterSameTopic = outbox.nextAttemptAt();
      const left = outbox.undelivered();
      for (const row of left) outbox.acknowledge(row);
      return {
        afterNewTopic,
        afterSameTopic,
        left: left.map((row) => row.message),
        afterAll: outbox.nextAttemptAt(),
        stored: sql.exec(PROBE).one().n,
      };
    });
    expect(answers.afterNewTopic).not.toBeNull();
    expect(answers.afterSameTopic).not.toBeNull();
    expect(answers.left).toEqual([entryOf("b", ["y", "z"])]);
    expect(answers.afterAll).toBeNull();
    expect(answers.stored).toBe(0);
  });

  it("leaves rows delivered for an answer to the next commit, owing only what came since", async () => {
    const answers = await onEmptiedOutbox((outbox, sql) => {
      const now = Date.now();
      outbox.enqueue(entryOf("a", ["x"]), now);
      outbox.enqueue(entryOf("b", ["y"]), now);
      const read = outbox.undelivered();
      // While the delivery is under way, a's topic changes again: its newer message is still owed.
      outbox.enqueue(entryOf("a", ["z"]), now);
      for (const row of read) outbox.acknowledge(row, true);
      const owedAfter = outbox.nextAttemptAt();
      const owed = outbox.undelivered().map((row) => row.message);
      const storedBefore = sql.exec(PROBE).one().n;
      // The next commit's deletion takes b (delivered), and leaves a, whose delivered message was replaced.
      outbox.deleteAcknowledged();
      const topics = sql
        .exec<{ topic: string }>("SELECT topic FROM outbox ORDER BY topic")
        .toArray()
        .map((row) => row.topic);
      return { owedAfter, owed, storedBefore, topics };
    });
    expect(answers.owedAfter).not.toBeNull();
    expect(answers.owed).toEqual([entryOf("a", ["x", "z"])]);
    expect(answers.storedBefore).toBe(2);
    expect(answers.topics).toEqual(["run:a"]);
  });
});
