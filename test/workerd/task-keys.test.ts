import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EFFECT_WINDOW_MS } from "../../src/catalog/effect-rules";
import { RETENTION_MS } from "../../src/ledger/run-ledger";
import { propertyPlans } from "../property-plan";
import { callTool, KEYS, ledgerStubOf, openRun, refundsOf, request } from "./helpers";
import { connect, envelopeOf } from "./mcp-client";

const plan = propertyPlans(env);

/**
 * A task key makes opening a run idempotent: the orchestrator's retry after a lost answer, a crash
 * or a restart gets the run it opened before, never a second one with fresh budgets and keys.
 */

let counter = 0;
const freshKey = () => `ticket-4711/attempt-${Date.now()}-${++counter}`;

function open(body: Record<string, unknown>, tenant: keyof typeof KEYS = "acme") {
  return request("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${KEYS[tenant]}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

interface Opened {
  run_id: string;
  run_token: string;
  state: string;
  reused?: boolean;
  task_key?: string;
}
const dataOf = (body: { data: unknown }) => body.data as Opened;

describe("task keys", () => {
  it("answer a repeated open with the same run, reused, and a token that works", async () => {
    const task_key = freshKey();
    const body = { namespace: "support", limits: { max_calls: 10 }, task_key };
    const first = await open(body);
    expect(first.status).toBe(201);
    expect(dataOf(first.body)).toMatchObject({ task_key, reused: false });
    const again = await open(body);
    expect(again.status).toBe(200);
    expect(dataOf(again.body)).toMatchObject({ run_id: dataOf(first.body).run_id, reused: true });
    const { run_id, run_token } = dataOf(again.body);
    const read = await callTool({ id: run_id, token: run_token, tenant: "acme", data: {} }, "lookup_order", {
      order_id: "A1001",
    });
    expect(read.body.outcome).toBe("success");
  });

  it("answer a retry even when the tenant may open no more runs: a retry opens nothing", async () => {
    // umbrella may open 4 runs a minute.
    const body = { namespace: "support", task_key: freshKey() };
    const first = await open(body, "umbrella");
    expect(first.status).toBe(201);
    for (let i = 0; i < 3; i += 1)
      expect((await open({ namespace: "support" }, "umbrella")).status).toBe(201);
    const fifth = await open({ namespace: "support" }, "umbrella");
    expect(fifth.status).toBe(429);
    expect(fifth.body.error?.details).toMatchObject({ scope: "runs_opened" });
    const again = await open(body, "umbrella");
    expect(again.status).toBe(200);
    expect(dataOf(again.body)).toMatchObject({ run_id: dataOf(first.body).run_id, reused: true });
    // A new task is a new run, and is refused.
    expect((await open({ namespace: "support", task_key: freshKey() }, "umbrella")).status).toBe(429);
  });

  it("refuse the same key with another body as a conflict naming the fields, and open nothing", async () => {
    const task_key = freshKey();
    await open({ namespace: "support", limits: { max_calls: 10 }, task_key });
    const other = await open({ namespace: "support", limits: { max_calls: 20 }, task_key });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({
      code: "conflict_error",
      details: { task_key, differing_fields: ["limits"] },
    });
    expect(other.body.error?.problems.map((problem) => problem.field)).toEqual(["limits"]);
  });

  it("open one run for many concurrent opens of one key", async () => {
    const task_key = freshKey();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => open({ namespace: "support", task_key })),
    );
    const ids = new Set(answers.map((answer) => dataOf(answer.body).run_id));
    expect(ids.size).toBe(1);
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    expect(answers.filter((answer) => dataOf(answer.body).reused === true)).toHaveLength(11);
  });

  it("answer an ended task's run as it is, never a fresh one", async () => {
    const task_key = freshKey();
    const first = dataOf((await open({ namespace: "support", task_key })).body);
    await request(`/v1/runs/${first.run_id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${first.run_token}` },
    });
    const again = await open({ namespace: "support", task_key });
    expect(dataOf(again.body)).toMatchObject({ run_id: first.run_id, state: "closed", reused: true });
  });

  it("refuse a task whose run retention deleted while the tenant's shards still hold its effects, then let the key go", async () => {
    const task_key = freshKey();
    const first = await openRun("hooli", { namespace: "support", task_key });
    const refund = { order_id: "H0162", amount_cents: 1000, reason: "user_cancel" };
    expect((await callTool(first, "issue_refund", refund)).body.outcome).toBe("success");
    await request(`/v1/runs/${first.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${first.token}` },
    });
    // The run ended more than a day ago: its alarm deletes it.
    await runInDurableObject(ledgerStubOf(first), (_instance, state) => {
      state.storage.sql.exec("UPDATE run SET ended_at = ?", Date.now() - RETENTION_MS - 1_000);
    });
    expect(await runDurableObjectAlarm(ledgerStubOf(first))).toBe(true);

    // Before: a new run under the old id, whose refund of H0162 the shards took for the old run's
    // own, so it went out with no human, as a repeat within the window never may.
    const again = await open({ namespace: "support", task_key }, "hooli");
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      code: "conflict_error",
      problems: [{ field: "task_key" }],
      details: { task_key, run_id: first.id },
    });
    expect(await refundsOf("H0162")).toHaveLength(1);
    // Another task's run meets the old refund as a repeat.
    const other = await openRun("hooli", { namespace: "support", task_key: freshKey() });
    expect((await callTool(other, "issue_refund", { ...refund, amount_cents: 900 })).body.error?.code).toBe(
      "approval_required",
    );

    // Kept for the longest effect window, then nothing of the run is left, and the key opens anew.
    const mark = await runInDurableObject(ledgerStubOf(first), async (_instance, state) => {
      const kept = state.storage.kv.get<{ until: number }>("retired_run");
      return { alarm: await state.storage.getAlarm(), until: kept?.until };
    });
    expect(mark.alarm).toBe(mark.until);
    expect(mark.until).toBeGreaterThanOrEqual(Date.now() + EFFECT_WINDOW_MS.max - 60_000);
    await runInDurableObject(ledgerStubOf(first), (_instance, state) => {
      state.storage.kv.put("retired_run", {
        run_id: first.id,
        deleted_at: 0,
        until: Date.now() - 1,
      });
    });
    expect(await runDurableObjectAlarm(ledgerStubOf(first))).toBe(true);
    expect(
      await runInDurableObject(ledgerStubOf(first), (_instance, state) =>
        state.storage.kv.get("retired_run"),
      ),
    ).toBeUndefined();
    expect((await open({ namespace: "support", task_key }, "hooli")).status).toBe(201);
  });

  it("belong to their tenant: one key in two tenants opens two runs", async () => {
    const task_key = freshKey();
    const acme = dataOf((await open({ namespace: "support", task_key }, "acme")).body);
    const globex = dataOf((await open({ namespace: "support", task_key }, "globex")).body);
    expect(acme.run_id).not.toBe(globex.run_id);
  });

  it.each([
    ["empty", "", "at least 1"],
    ["over 200 characters", "k".repeat(201), "at most 200 characters"],
    ["with a control character", "ticket\u0000-1", "printable characters only"],
  ])("refuse a task key that is %s, saying why", async (_what, task_key, reason) => {
    const { status, body } = await open({ namespace: "support", task_key });
    expect(status).toBe(422);
    expect(body.error?.problems).toContainEqual(
      expect.objectContaining({ field: "task_key", reason: expect.stringContaining(reason) }),
    );
  });

  it("let an agent's MCP sessions of one task share its run: the second session's write replays", async () => {
    const headers = { "x-task-key": freshKey() };
    const args = { customer_id: "C100", priority: "low", summary: "Shared by two sessions of one task." };
    const first = await connect("acme-agent-key", { headers });
    const wrote = envelopeOf(
      await first.client.callTool({ name: "create_internal_ticket", arguments: args }),
    );
    expect(wrote.outcome).toBe("success");
    await first.client.close();
    const second = await connect("acme-agent-key", { headers });
    const again = envelopeOf(
      await second.client.callTool({ name: "create_internal_ticket", arguments: args }),
    );
    expect(again.replayed).toBe(true);
    expect(again.idempotency_key).toBe(wrote.idempotency_key);
    await second.client.close();
  });

  it("refuse an MCP session whose task key header is not one", async () => {
    await expect(connect("acme-agent-key", { headers: { "x-task-key": "k".repeat(201) } })).rejects.toThrow(
      /X-Task-Key: a task key has at most 200 characters/,
    );
  });

  it("open at most one run per key under any mix of concurrent opens, and refuse only another body", async () => {
    // Generated: a burst of concurrent opens over a few keys and a few bodies. Whatever commits first
    // for a key is its run; every other open of that key is that run again (same body) or a
    // conflict (another body), never a second run. Seeded and bounded for CI. Opened for initech,
    // whose limits let a soak (many times CI's rounds) open hundreds of runs a minute; acme's 120 a
    // minute would refuse them as rate_limited, rightly.
    const bodies = [
      { namespace: "support" },
      { namespace: "support", limits: { max_calls: 7 } },
      { namespace: "support", limits: { max_writes: 3 } },
    ];
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.nat({ max: 2 }), body: fc.nat({ max: 2 }) }), {
          minLength: 1,
          maxLength: 12,
        }),
        async (opens) => {
          const prefix = `prop-${Date.now()}-${++round}`;
          const answers = await Promise.all(
            opens.map(({ key, body }) => open({ ...bodies[body], task_key: `${prefix}-${key}` }, "initech")),
          );
          const runs = new Map<number, Set<string>>();
          const created = new Map<number, number>();
          answers.forEach((answer, index) => {
            const { key, body } = opens[index] ?? { key: 0, body: 0 };
            if (answer.status === 409) {
              expect(answer.body.error?.code).toBe("conflict_error");
              return;
            }
            expect([200, 201], JSON.stringify(answer.body.error)).toContain(answer.status);
            const ids = runs.get(key) ?? new Set<string>();
            ids.add(dataOf(answer.body).run_id);
            runs.set(key, ids);
            if (answer.status === 201) created.set(key, (created.get(key) ?? 0) + 1);
            // A key's accepted opens all carry the body it first committed with.
            const accepted = opens.filter(
              (_, other) => opens[other]?.key === key && answers[other]?.status !== 409,
            );
            expect(new Set(accepted.map((open_) => open_.body)).size).toBe(1);
            expect(accepted[0]?.body).toBe(body);
          });
          for (const [key, ids] of runs) {
            expect(ids.size, `key ${key}`).toBe(1);
            expect(created.get(key) ?? 0, `key ${key}`).toBe(1);
          }
        },
      ),
      // Each round opens up to three runs: past 150 rounds a soak waits on the harness, not the proxy.
      plan({ seed: 20261201, numRuns: 15, soakAtMost: 150 }),
    );
  });
});
