import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Outbox } from "../../src/ledger/outbox";
import { MAX_DISCOVERY_CALLS } from "../../src/machine/grants";
import { callTool, ledgerStubOf, openRun, restartDurableObject, type TestRun } from "./helpers";

/**
 * What a run's ledger does when it wakes (its object left memory, the run is called again): the
 * statements it runs before and during that call, counted. A woken ledger asks once whether it holds
 * a schema and which version, and reads only what the call needs; its limits hold as before.
 */

type Recorder = { exec: SqlStorage["exec"] };
const recording: { seen: string[]; restore: (() => void) | null } = { seen: [], restore: null };

/**
 * Records every SQL statement any object of this isolate runs from now on, the constructor of a
 * woken object included (its `sql` is new, its prototype is not), whitespace collapsed.
 */
async function recordAllStatements(run: TestRun): Promise<void> {
  const proto = await runInDurableObject(
    ledgerStubOf(run),
    (_instance, state) => Object.getPrototypeOf(state.storage.sql) as Recorder,
  );
  const exec = proto.exec;
  recording.seen = [];
  proto.exec = function (this: SqlStorage, query: string, ...bindings: SqlStorageValue[]) {
    recording.seen.push(query.replace(/\s+/g, " ").trim());
    return exec.call(this, query, ...bindings);
  } as SqlStorage["exec"];
  recording.restore = () => {
    proto.exec = exec;
  };
}

afterEach(() => {
  recording.restore?.();
  recording.restore = null;
});

const read = async (run: TestRun, orderId: string) => {
  const answer = await callTool(run, "lookup_order", { order_id: orderId });
  expect(answer.body.outcome, JSON.stringify(answer.body.error)).toBe("success");
};

/** A run that read `orderId`, its ledger then restarted, with every statement from here on recorded. */
async function wokenAfterReading(orderId: string): Promise<TestRun> {
  const run = await openRun("acme", { namespace: "support" });
  await read(run, orderId);
  await recordAllStatements(run);
  await restartDurableObject(ledgerStubOf(run));
  recording.seen = [];
  return run;
}

describe("a woken run ledger", () => {
  it("asks for its schema and version in one statement, and reads no discovery count for a read", async () => {
    const run = await wokenAfterReading("A1001");
    await read(run, "A1001");
    const seen = recording.seen;
    expect(seen.filter((statement) => statement.includes("sqlite_master"))).toEqual([]);
    expect(seen.filter((statement) => statement.includes("schema_version"))).toEqual([
      "SELECT version FROM schema_version WHERE id = 1",
    ]);
    expect(seen.filter((statement) => statement.includes("find_tools"))).toEqual([]);
    // The run, the outbox's next message, the approval counts and the scenario's uses: one read.
    const firstReads = seen.filter((statement) =>
      /^SELECT .*\bFROM (run|outbox|approvals|scenario)\b/.test(statement),
    );
    expect(firstReads.filter((statement) => !statement.startsWith("SELECT topic, seq, message"))).toEqual([
      expect.stringMatching(/^SELECT run\.\*, \(SELECT MIN\(next_attempt_at\) FROM outbox\)/),
    ]);
  });

  it("does not tell the directory again what it told before waking, and tells it what is new", async () => {
    const run = await wokenAfterReading("A1001");
    // The same tool and subject as before: the directory already has them.
    await read(run, "A1001");
    const outboxWrites = () =>
      recording.seen.filter((statement) => statement.startsWith("INSERT INTO outbox"));
    expect(outboxWrites()).toEqual([]);
    // A subject it has not heard of goes to the directory, with what it heard before.
    await read(run, "A1002");
    expect(outboxWrites()).toHaveLength(1);
    const told = await runInDurableObject(ledgerStubOf(run), (_instance, state) =>
      state.storage.sql.exec<{ told: string }>("SELECT told FROM run").one(),
    );
    expect(JSON.parse(told.told)).toEqual({
      tools: ["lookup_order"],
      subjects: ["order_id=A1001", "order_id=A1002"],
    });
  });

  it("knows after waking whether its outbox owes a message, and delivers it", async () => {
    const run = await openRun("acme", { namespace: "support" });
    await read(run, "A1001");
    // A crash between a commit and its delivery leaves the run's entry in the outbox.
    await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      const now = new Date().toISOString();
      new Outbox(state.storage.sql).enqueue(
        {
          kind: "run",
          entry: {
            run_id: run.id,
            namespace: "support",
            state: "open",
            created_at: now,
            deadline_at: new Date(Date.now() + 60_000).toISOString(),
            ended_at: null,
            calls_used: 1,
            tools: ["lookup_order"],
            subjects: ["order_id=A1001"],
            last_activity_at: now,
          },
        },
        Date.now(),
      );
    });
    await restartDurableObject(ledgerStubOf(run));
    await read(run, "A1001");
    const left = () =>
      runInDurableObject(
        ledgerStubOf(run),
        (_instance, state) =>
          state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n,
      );
    await vi.waitFor(async () => expect(await left()).toBe(0), { timeout: 5_000, interval: 20 });
  });

  it("still counts the run's find_tools and use_tool calls against their cap", async () => {
    const run = await openRun("acme", { tools: ["lookup_order"], limits: { max_calls: 50 } });
    for (let index = 0; index < MAX_DISCOVERY_CALLS - 1; index++) {
      const found = await callTool(run, "find_tools", { query: `shipment ${index}` });
      expect(found.body.outcome, JSON.stringify(found.body.error)).toBe("success");
    }
    await restartDurableObject(ledgerStubOf(run));
    await read(run, "A1001");
    const last = await callTool(run, "find_tools", { query: "shipment last" });
    expect(last.body.outcome, JSON.stringify(last.body.error)).toBe("success");
    await restartDurableObject(ledgerStubOf(run));
    const over = await callTool(run, "find_tools", { query: "shipment over" });
    expect(over.body.error?.code).toBe("budget_exhausted");
  });

  it("serves a run whose ledger woke with its schema and run as they were", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_calls: 3 } });
    await read(run, "A1001");
    await restartDurableObject(ledgerStubOf(run));
    await read(run, "A1002");
    await restartDurableObject(ledgerStubOf(run));
    await read(run, "A1003");
    const refused = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(refused.body.error?.code).toBe("budget_exhausted");
  });
});
