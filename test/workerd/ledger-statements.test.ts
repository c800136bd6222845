import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ACKNOWLEDGED_DELETE_AFTER_MS } from "../../src/ledger/outbox";
import {
  callTool,
  ledgerStubOf,
  openRun,
  outboxTopicsOf,
  runLedgerTimers,
  storeRun,
  type TestRun,
  withHeldTimers,
} from "./helpers";

interface Counted {
  statements: number;
  commits: number;
  sql: string[];
}
const OUTBOX_TOPICS = "SELECT topic FROM outbox ORDER BY topic";
type CountingStorage = DurableObjectStorage & { counted?: Counted };

/**
 * Counts what the run's ledger asks of its storage from now on: every SQL statement it executes
 * (`sql.exec`, which the ledger's stores hold from its construction) and every durable commit
 * (`transactionSync`, through which each of its commits goes). Resolves with a reader.
 */
async function countStorage(run: TestRun): Promise<() => Promise<Counted>> {
  await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
    const storage = state.storage as CountingStorage;
    if (storage.counted === undefined) {
      const sql = storage.sql;
      const exec = sql.exec.bind(sql);
      sql.exec = ((query: string, ...bindings: unknown[]) => {
        // The test's own look at the outbox (`outboxTopicsOf`) is not the call's.
        if (query !== OUTBOX_TOPICS) {
          const counted = storage.counted as Counted;
          counted.statements++;
          counted.sql.push(query.replace(/\s+/g, " ").slice(0, 60));
        }
        return exec(query, ...bindings);
      }) as typeof sql.exec;
      const transactionSync = storage.transactionSync.bind(storage);
      storage.transactionSync = <T>(closure: () => T): T => {
        (storage.counted as Counted).commits++;
        return transactionSync(closure);
      };
    }
    storage.counted = { statements: 0, commits: 0, sql: [] };
  });
  return () =>
    runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      const storage = state.storage as CountingStorage;
      const counted = storage.counted as Counted;
      // Counted no more: the test's own statements after this are not the call's.
      storage.counted = { statements: 0, commits: 0, sql: [] };
      return counted;
    });
}

/**
 * Runs the ledger's held timers until its outbox is empty: the rows a call delivered are deleted
 * before the next call is counted, not by it. Timers are held (`withHeldTimers`), so a deletion
 * never races the statements counted.
 */
async function settle(run: TestRun): Promise<void> {
  await vi.waitFor(
    async () => {
      await runLedgerTimers(run, ACKNOWLEDGED_DELETE_AFTER_MS);
      expect(await outboxTopicsOf(run)).toEqual([]);
    },
    { timeout: 10_000, interval: 20 },
  );
}

/** A run whose ledger exists and has answered one read already, delivered: the steady state of a run. */
async function warmRun(): Promise<TestRun> {
  const run = await openRun("initech");
  await storeRun(run);
  const first = await callTool(run, "lookup_order", { order_id: "I3001" });
  expect(first.body.outcome, JSON.stringify(first.body.error)).toBe("success");
  await settle(run);
  return run;
}

/**
 * What `call` asks of the run's ledger, until its answer and, with `delivered`, until what it
 * left to deliver after its answer (a read's news for the directory) is delivered and deleted;
 * the run settled after it.
 */
async function countedCall(run: TestRun, call: () => Promise<void>, delivered = false): Promise<Counted> {
  const counted = await countStorage(run);
  await call();
  if (delivered) {
    await vi.waitFor(async () => expect(await outboxTopicsOf(run)).toEqual([]), {
      timeout: 10_000,
      interval: 20,
    });
  }
  const figures = await counted();
  await settle(run);
  return figures;
}

const figures = ({ statements, commits }: Counted) => ({ statements, commits });
const ticket = { customer_id: "C301", summary: "Counting statements of a first write.", priority: "low" };

// Timers held throughout: a delivered row's deletion happens when `settle` runs it, between calls.
describe("what a call asks of its run's ledger", () => {
  it("a read: two statements and one commit; nine for an order the run had not read (its repeat count, its version, its subject for the directory)", () =>
    withHeldTimers(async () => {
      const run = await warmRun();
      const known = await countedCall(run, async () => {
        const read = await callTool(run, "lookup_order", { order_id: "I3001" });
        expect(read.body.outcome, JSON.stringify(read.body.error)).toBe("success");
      });
      expect(figures(known), known.sql.join("\n")).toEqual({ statements: 2, commits: 1 });
      // A new order: the repeat breaker counts the run's earlier identical calls, the result store
      // records the order's version, and the order is a new subject of the run's directory entry,
      // which goes out with the commit and is deleted once delivered.
      const named = await countedCall(
        run,
        async () => {
          const read = await callTool(run, "lookup_order", { order_id: "I3002" });
          expect(read.body.outcome, JSON.stringify(read.body.error)).toBe("success");
        },
        true,
      );
      expect(figures(named), named.sql.join("\n")).toEqual({ statements: 9, commits: 1 });
    }));

  it("a first write: twenty statements and two commits, its audit receipt among them; its replay two and one", () =>
    withHeldTimers(async () => {
      // The outcome's commit writes the write's audit receipt to the outbox beside its effect's fate.
      const run = await warmRun();
      const written = await countedCall(run, async () => {
        const first = await callTool(run, "create_internal_ticket", ticket);
        expect(first.body.outcome, JSON.stringify(first.body.error)).toBe("success");
      });
      expect(figures(written), written.sql.join("\n")).toEqual({ statements: 20, commits: 2 });
      const replayed = await countedCall(run, async () => {
        const replay = await callTool(run, "create_internal_ticket", ticket);
        expect(replay.body).toMatchObject({ outcome: "success", replayed: true });
      });
      expect(figures(replayed), replayed.sql.join("\n")).toEqual({ statements: 2, commits: 1 });
    }));
});
