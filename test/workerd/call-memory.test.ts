import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ACKNOWLEDGED_DELETE_AFTER_MS } from "../../src/ledger/outbox";
import {
  armFault,
  callTool,
  ledgerStubOf,
  openRun,
  outboxTopicsOf,
  restartDurableObject,
  runLedgerTimers,
  type TestRun,
  withHeldTimers,
} from "./helpers";

/**
 * What the run ledger keeps in memory of its run's calls (repeat counts, the newest version seen of
 * each resource, how many approvals are pending) is what its storage holds: a restarted ledger
 * reads it back, and a commit that fails leaves nothing of itself in memory.
 */

/** The next `transactionSync` of the run's ledger writes its event, then fails, so nothing of it is kept. */
async function failNextCommit(run: TestRun): Promise<void> {
  await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
    const storage = state.storage;
    const original = storage.transactionSync.bind(storage);
    storage.transactionSync = <T>(closure: () => T): T => {
      storage.transactionSync = original;
      return original(() => {
        closure();
        throw new Error("test: the commit fails");
      });
    };
  });
}

/** Records the SQL statements the run's ledger runs from now on that name `table`. */
async function recordStatementsOn(run: TestRun, table: string): Promise<() => Promise<string[]>> {
  await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
    const sql = state.storage.sql as SqlStorage & { seen?: string[] };
    const exec = sql.exec.bind(sql);
    sql.seen = [];
    sql.exec = ((query: string, ...bindings: SqlStorageValue[]) => {
      if (new RegExp(`\\b${table}\\b`).test(query)) sql.seen?.push(query);
      return exec(query, ...bindings);
    }) as typeof sql.exec;
  });
  return () =>
    runInDurableObject(
      ledgerStubOf(run),
      (_instance, state) => (state.storage.sql as SqlStorage & { seen?: string[] }).seen ?? [],
    );
}

type Watched = SqlStorage & {
  cursors?: SqlStorageCursor<Record<string, SqlStorageValue>>[];
  only?: RegExp;
};

/**
 * Counts the statements the run's ledger runs from now on that match `only` (every one by
 * default), and the rows SQLite read for them: each statement's cursor says how many (`rowsRead`),
 * indexes included.
 */
async function countRowsRead(
  run: TestRun,
  only: RegExp = /./,
): Promise<() => Promise<{ statements: number; rows: number }>> {
  await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
    const sql = state.storage.sql as Watched;
    if (sql.cursors === undefined) {
      const exec = sql.exec.bind(sql);
      sql.exec = ((query: string, ...bindings: SqlStorageValue[]) => {
        const cursor = exec(query, ...bindings);
        if (sql.only?.test(query)) sql.cursors?.push(cursor);
        return cursor;
      }) as typeof sql.exec;
    }
    sql.only = only;
    sql.cursors = [];
  });
  return () =>
    runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      const cursors = (state.storage.sql as Watched).cursors ?? [];
      return {
        statements: cursors.length,
        rows: cursors.reduce((rows, cursor) => rows + cursor.rowsRead, 0),
      };
    });
}

describe("the ledger's memory of its run's calls", () => {
  it("reads no more rows for a call of a long run than for one of a short run", async () => {
    // initech's repeat threshold is 1,000: the same read again and again is admitted.
    const run = await openRun("initech", { namespace: "support", limits: { max_calls: 100 } });
    const read = async () => {
      const answer = await callTool(run, "lookup_order", { order_id: "I3001" });
      expect(answer.body.outcome, JSON.stringify(answer.body.error)).toBe("success");
    };
    await read();
    await read();
    const early = await countRowsRead(run);
    await read();
    const rowsEarly = (await early()).rows;
    for (let call = 0; call < 30; call++) await read();
    const late = await countRowsRead(run);
    await read();
    expect((await late()).rows).toBeLessThanOrEqual(rowsEarly);
  });

  it("finds a run's open trace entries at its alarm without reading its closed ones", async () => {
    /** The rows the alarm of a run of `calls` reads looking for entries a restart cut off. */
    const readAtAlarm = async (calls: number) => {
      const run = await openRun("initech", { namespace: "support", limits: { max_calls: 100 } });
      for (let call = 0; call < calls; call++) {
        const answer = await callTool(run, "lookup_order", { order_id: `I30${10 + (call % 10)}` });
        expect(answer.body.outcome, JSON.stringify(answer.body.error)).toBe("success");
      }
      const search = await countRowsRead(run, /FROM trace .*WHERE ended_at IS NULL/);
      expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
      return search();
    };
    const short = await readAtAlarm(3);
    expect(short.statements).toBe(1);
    // Ten times the closed entries, the same rows read: none of them.
    expect(await readAtAlarm(30)).toEqual(short);
  });

  it("keeps the repeat count and the newest version seen across restarts of the ledger", async () => {
    // acme's repeat threshold is 3: the third identical call is refused.
    const run = await openRun("acme");
    const fresh = await callTool(run, "lookup_order", { order_id: "A1003" });
    expect(fresh.body.observed_state).toMatchObject({ freshness: { stale: false } });
    const version = (fresh.body.data as { version: number }).version;
    await restartDurableObject(ledgerStubOf(run));
    await armFault(run.id, { mode: "stale", path_prefix: "/orders" });
    const old = await callTool(run, "lookup_order", { order_id: "A1003" });
    expect(old.body.observed_state).toMatchObject({
      stale: true,
      freshness: { resource: "order:A1003", version: version - 1, newest_seen: version, stale: true },
    });
    await restartDurableObject(ledgerStubOf(run));
    const third = await callTool(run, "lookup_order", { order_id: "A1003" });
    expect(third.body.error).toMatchObject({
      code: "repeat_detected",
      details: { earlier_identical_calls: 2, threshold: 3 },
    });
  });

  it("counts no repeat of a read whose commit failed", async () => {
    const run = await openRun("acme");
    expect((await callTool(run, "lookup_order", { order_id: "A1002" })).body.outcome).toBe("success");
    await failNextCommit(run);
    const failed = await callTool(run, "lookup_order", { order_id: "A1002" });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    // The failed read left no trace entry: this is the second identical call, not the third.
    const second = await callTool(run, "lookup_order", { order_id: "A1002" });
    expect(second.body.outcome, JSON.stringify(second.body.error)).toBe("success");
    const third = await callTool(run, "lookup_order", { order_id: "A1002" });
    expect(third.body.error).toMatchObject({
      code: "repeat_detected",
      details: { earlier_identical_calls: 2 },
    });
  });

  it("reads no approval for a write of a run that has none, and sweeps once it has a pending one", async () => {
    const run = await openRun("acme");
    const ticket = (summary: string) => ({ customer_id: "C100", summary, priority: "low" });
    const first = await callTool(run, "create_internal_ticket", ticket("A first ticket of this run."));
    expect(first.body.outcome, JSON.stringify(first.body.error)).toBe("success");
    const statements = await recordStatementsOn(run, "approvals");
    const second = await callTool(run, "create_internal_ticket", ticket("A second ticket of this run."));
    expect(second.body.outcome, JSON.stringify(second.body.error)).toBe("success");
    expect(await statements()).toEqual([]);
    // A refund of acme's waits for a human: from then on a write reads the pending approvals again.
    const refund = await callTool(run, "issue_refund", {
      order_id: "A1001",
      amount_cents: 150,
      reason: "user_cancel",
    });
    expect(refund.body.error?.code).toBe("approval_required");
    const third = await callTool(run, "create_internal_ticket", ticket("A third ticket of this run."));
    expect(third.body.outcome, JSON.stringify(third.body.error)).toBe("success");
    expect(
      (await statements()).filter((query) => query.includes("state = 'pending'")).length,
    ).toBeGreaterThan(0);
  });

  it("reads a write's key row once, not after writing it, and replays it without reading storage", async () => {
    const run = await openRun("acme");
    const call = { customer_id: "C100", summary: "A ticket written once.", priority: "low" };
    const keyStatements = await recordStatementsOn(run, "idempotency");
    const first = await callTool(run, "create_internal_ticket", call);
    expect(first.body.outcome, JSON.stringify(first.body.error)).toBe("success");
    const reads = (statements: string[]) => statements.filter((query) => /^\s*SELECT/i.test(query));
    // Its intake reads the key (there is none); the send and the settlement write it, and nothing reads it back.
    expect(reads(await keyStatements())).toHaveLength(1);
    const replayStatements = await recordStatementsOn(run, "idempotency");
    const again = await callTool(run, "create_internal_ticket", call);
    expect(again.body.replayed).toBe(true);
    expect(again.body.data).toEqual(first.body.data);
    expect(reads(await replayStatements())).toEqual([]);
    // A further write's claim is kept as written: its fate is reported without reading the claim back.
    const claimStatements = await recordStatementsOn(run, "effect_claims");
    const other = await callTool(run, "create_internal_ticket", { ...call, summary: "Another ticket." });
    expect(other.body.outcome, JSON.stringify(other.body.error)).toBe("success");
    const claimReads = reads(await claimStatements()).filter((query) =>
      /effect_claims WHERE key/.test(query),
    );
    expect(claimReads).toEqual([]);
  });

  it("replaces a write's fate in its outbox without reading the one it replaces, delivers it before answering, and deletes it with the next commit", async () => {
    const run = await openRun("acme");
    const ticket = (summary: string) => ({ customer_id: "C100", summary, priority: "low" });
    // Held, a delivered row's own deletion (ACKNOWLEDGED_DELETE_AFTER_MS later) cannot race the
    // statements watched: the next commit is what deletes it.
    await withHeldTimers(async () => {
      // The run's entry learns the tool and the customer here: the write below is news for the shards alone.
      const named = await callTool(
        run,
        "create_internal_ticket",
        ticket("The write that names the customer."),
      );
      expect(named.body.outcome, JSON.stringify(named.body.error)).toBe("success");
      const outbox = await recordStatementsOn(run, "outbox");
      const write = await callTool(
        run,
        "create_internal_ticket",
        ticket("The write whose outbox is watched."),
      );
      expect(write.body.outcome, JSON.stringify(write.body.error)).toBe("success");
      const kinds = async (statements: () => Promise<string[]>) =>
        (await statements()).map((query) =>
          query.replace(/\s+/g, " ").trim().split(" ").slice(0, 2).join(" "),
        );
      expect(await kinds(outbox)).toEqual([
        // The first write's rows (its fate, the run's entry, its audit receipt), delivered before its
        // answer, go with this write's first commit.
        "DELETE FROM",
        "DELETE FROM",
        "DELETE FROM",
        // The admission's "sent", then the outcome's "confirmed" over it, written unread, and the
        // outcome's audit receipt, a row of its own.
        "INSERT INTO",
        "INSERT INTO",
        "INSERT INTO",
        // The delivery, done before the answer came: when the next message is due, and what is owed.
        // The answer waits for no commit deleting what was delivered.
        "SELECT MIN(next_attempt_at)",
        "SELECT topic,",
      ]);
      // Delivered, its rows wait for the next commit, and nothing is owed: the alarm is not moved for them.
      const topics = await outboxTopicsOf(run);
      expect(topics.filter((topic) => !topic.startsWith("audit:"))).toEqual([
        `effect:${write.body.idempotency_key}`,
      ]);
      expect(topics.filter((topic) => topic.startsWith("audit:"))).toHaveLength(1);
      const nextStatements = await recordStatementsOn(run, "outbox");
      const next = await callTool(run, "lookup_order", { order_id: "A1001" });
      expect(next.body.outcome, JSON.stringify(next.body.error)).toBe("success");
      // The next call's commit deletes it; that call's own news goes out in the background, and its
      // row goes on its own once its deletion's timer runs.
      expect((await kinds(nextStatements))[0]).toBe("DELETE FROM");
      await vi.waitFor(
        async () => {
          await runLedgerTimers(run, ACKNOWLEDGED_DELETE_AFTER_MS);
          expect(await outboxTopicsOf(run)).toEqual([]);
        },
        { timeout: 5_000, interval: 20 },
      );
    });
  });
});
