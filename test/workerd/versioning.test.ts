import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { computeCatalogVersion } from "../../src/catalog/catalog";
import { computeToolVersion } from "../../src/catalog/tool-version";
import { servedCatalogVersion, servedToolVersions } from "../../src/generated/catalog";
import { catalog } from "../../src/tools";
import {
  callTool,
  ledgerStubOf,
  openRun,
  request,
  restartDurableObject,
  storeRun,
  traceOf,
  withPendingOpen,
} from "./helpers";

describe("catalog versions", () => {
  it("serves the version compile computed, which is the one its tools' contracts hash to here", async () => {
    expect(await catalog.version()).toBe(servedCatalogVersion);
    // Computed in this runtime from the served tools' JSON Schemas: compile hashed the same text.
    expect(await computeCatalogVersion(catalog.all())).toBe(servedCatalogVersion);
    // And each tool's version, from its own contract alone.
    for (const tool of catalog.all()) {
      const ref = `${tool.namespace}.${tool.name}`;
      expect(await computeToolVersion(tool), ref).toEqual(servedToolVersions[ref]);
    }
  });

  it("shows the catalog's content version in /healthz, run status and every trace entry", async () => {
    const version = await catalog.version();
    expect((await request("/healthz")).body.data).toMatchObject({ catalog_version: version });
    const run = await openRun("acme");
    expect(run.data.catalog_version).toBe(version);
    await callTool(run, "lookup_order", { order_id: "A1001" });
    const status = await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } });
    expect(status.body.data).toMatchObject({ catalog_version: version });
    expect((await traceOf(run)).map((entry) => entry.catalog_version)).toEqual([version]);
  });

  it("lets a run opened under another catalog version go on when none of its tools changed", async () => {
    const run = await openRun("acme");
    await storeRun(run);
    const stub = ledgerStubOf(run);
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE run SET catalog_version = 'cat_0000000000000000'");
    });
    // A fresh instance reads the run as a deploy would find it.
    await restartDurableObject(stub);
    const { status } = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(status).toBe(200);
  });

  it("refuses once a call of a tool whose version moved under the run, saying what changed; the next call goes on", async () => {
    const run = await openRun("acme");
    await storeRun(run);
    const stub = ledgerStubOf(run);
    const served = servedToolVersions["support.lookup_order"];
    if (!served) throw new Error("lookup_order has no served version");
    // As if the run had been shown lookup_order before its description and arguments changed.
    const earlier = {
      version: "tv_0000000000000000",
      parts: { ...served.parts, description: "00000000", input: "11111111" },
    };
    await runInDurableObject(stub, (_instance, state) => {
      const pins = JSON.parse(
        state.storage.sql.exec<{ v: string }>("SELECT tool_versions AS v FROM run").one().v,
      );
      pins["support.lookup_order"] = earlier;
      state.storage.sql.exec("UPDATE run SET tool_versions = ?", JSON.stringify(pins));
    });
    await restartDurableObject(stub);
    const refused = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: "tool_changed",
      recommended_next_action: "list_tools",
      side_effect_confirmed: false,
      details: {
        tool: "support.lookup_order",
        changed: ["description", "input"],
        run_tool_version: "tv_0000000000000000",
        current_tool_version: served.version,
      },
    });
    expect(refused.body.error?.message).toContain("its description, the arguments it takes");
    expect(refused.body.budget?.calls_left).toBeGreaterThan(0);
    // Another tool of the run is untouched, and the changed one, now known, goes on.
    expect((await callTool(run, "get_customer_profile", { customer_id: "C101" })).status).toBe(200);
    expect((await callTool(run, "lookup_order", { order_id: "A1001" })).status).toBe(200);
    expect((await traceOf(run)).map((entry) => entry.tool)).toEqual(["get_customer_profile", "lookup_order"]);
  });

  it("pins a run its open stored nothing of to the tools its open showed: only a tool whose version moved since is told", async () => {
    const run = await openRun("acme");
    // As if the open was answered by the deploy before this one, which showed none of today's tools.
    const earlier = await withPendingOpen(run, {
      catalog_version: "cat_0000000000000000",
      tools_seen: "000000",
    });
    const { status, body } = await callTool(earlier, "lookup_order", { order_id: "A1001" });
    expect(status).toBe(409);
    expect(body.error).toMatchObject({
      code: "tool_changed",
      details: { changed: null, run_tool_version: null },
    });
    expect(body.error?.message).toContain("the catalog changed since this run's tools were listed");
    expect((await callTool(earlier, "lookup_order", { order_id: "A1001" })).status).toBe(200);
    // An open under another catalog that showed today's tools (another tool changed): nothing to tell.
    const other = await withPendingOpen(await openRun("acme"), { catalog_version: "cat_0000000000000000" });
    expect((await callTool(other, "lookup_order", { order_id: "A1001" })).status).toBe(200);
  });
});
