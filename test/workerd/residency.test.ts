import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RunFiltersSchema } from "../../src/approvals/list-filters";
import { placedObject } from "../../src/config/placement";
import { parseTenants } from "../../src/config/tenants";
import { TOOL_LIMIT_SHARDS, toolBucket } from "../../src/ratelimit/tool-limits";
import { callTool, openRun, request } from "./helpers";

/**
 * stark declares `residency = { jurisdiction = "eu", location_hint = "weur" }`. workerd refuses
 * `jurisdiction()`, so the tests run with RESIDENCY=simulated (.dev.vars.example): an EU object is
 * named `eu:<name>` in the plain namespace. What these tests show is the routing: every object of
 * stark is the EU one, reached again from its tenant and id, and a tenant without residency is
 * where it always was.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const stark = parseTenants(env.TENANTS).stark;

function ledgerNamed(name: string) {
  return env.RUN_LEDGER.get(env.RUN_LEDGER.idFromName(name));
}

/** The effects an effect shard holds (a shard first reached here holds none). */
async function effectsIn(name: string): Promise<number> {
  const stub = env.EFFECT_SHARD.get(env.EFFECT_SHARD.idFromName(name));
  return runInDurableObject(stub, (_instance, state) => {
    const tables = state.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'effects'").toArray();
    if (tables.length === 0) return 0;
    return Number(state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM effects").one().n);
  });
}

/** The runs a directory object lists. */
async function runsIn(name: string): Promise<string[]> {
  const directory = env.APPROVAL_DIRECTORY.get(env.APPROVAL_DIRECTORY.idFromName(name));
  return (await directory.listRuns(RunFiltersSchema.parse({}))).runs.map((entry) => entry.run_id);
}

describe("a tenant in the EU jurisdiction", () => {
  it("runs end to end with every object of its run and of the tenant created in the EU", async () => {
    const run = await openRun("stark");
    const looked = await callTool(run, "lookup_order", { order_id: "S1001" });
    expect(looked.body.error?.code).toBe("not_found");
    // A write claims its effect in the tenant's effect shards before it leaves.
    const ticket = await callTool(run, "create_internal_ticket", {
      customer_id: "C609",
      priority: "normal",
      summary: "Customer asks about a late parcel",
    });
    expect(ticket.body.idempotency_key).toMatch(/^idk_/);
    const status = await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } });
    expect(status.status).toBe(200);
    expect((status.body.data as { used: { calls_used: number } }).used.calls_used).toBe(2);
    const trace = await request(`/v1/runs/${run.id}/trace`, {
      headers: { authorization: `Bearer ${run.token}` },
    });
    expect(trace.status).toBe(200);

    // The run id leads to the EU ledger, and only to it.
    expect(await ledgerNamed(`eu:stark/${run.id}`).status("stark")).not.toBeNull();
    expect(await ledgerNamed(`stark/${run.id}`).status("stark")).toBeNull();
    // The run's entry reaches the tenant's EU directory (delivered after the answer), not the plain one.
    let indexed: string[] = [];
    for (let wait = 0; wait < 40 && !indexed.includes(run.id); wait++) {
      indexed = await runsIn("eu:stark");
      if (!indexed.includes(run.id)) await sleep(25);
    }
    expect(indexed).toContain(run.id);
    expect(await runsIn("stark")).toEqual([]);
    // The write's effect is held by one of the tenant's EU effect shards, by none of the plain ones.
    const shards = Array.from({ length: stark?.effect_shards ?? 0 }, (_, n) => n);
    const eu = await Promise.all(shards.map((n) => effectsIn(`eu:stark/${n}`)));
    const plain = await Promise.all(shards.map((n) => effectsIn(`stark/${n}`)));
    expect(eu.reduce((sum, n) => sum + n, 0)).toBeGreaterThan(0);
    expect(plain.reduce((sum, n) => sum + n, 0)).toBe(0);
  });

  it("spends its tool limits in its EU rate limiters, not in the plain ones", async () => {
    const run = await openRun("stark");
    const limit = stark?.tool_limits.support?.create_internal_ticket;
    if (!limit) throw new Error("stark limits create_internal_ticket in wrangler.toml");
    const args = { customer_id: "C608", priority: "normal", summary: "Customer asks for an invoice copy" };
    for (const summary of ["Customer asks for an invoice copy", "Customer asks about a late parcel"]) {
      await callTool(run, "create_internal_ticket", { ...args, summary });
    }
    const { bucket, shard } = toolBucket("support", "create_internal_ticket", limit, args);
    expect(shard).toBeLessThan(TOOL_LIMIT_SHARDS);
    const limiter = (name: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
    expect((await limiter(`eu:stark/tools/${shard}`).admit([bucket])).ok).toBe(false);
    expect((await limiter(`stark/tools/${shard}`).admit([bucket])).ok).toBe(true);
  });
});

describe("a tenant without residency", () => {
  it("keeps its objects under their plain names", async () => {
    const run = await openRun("globex");
    await callTool(run, "lookup_order", { order_id: "B2001" });
    expect(await ledgerNamed(`globex/${run.id}`).status("globex")).not.toBeNull();
    expect(await ledgerNamed(`eu:globex/${run.id}`).status("globex")).toBeNull();
  });
});

describe("what the local runtime cannot show", () => {
  it("workerd refuses a jurisdiction, which is why the tests simulate it in names", () => {
    expect(() => placedObject(env.RUN_LEDGER, { jurisdiction: "eu" }, "cloudflare", "stark/r")).toThrow(
      /not implemented in workerd/,
    );
  });
});
