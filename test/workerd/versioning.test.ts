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

  it("tells a run opened under another catalog version to start over, instead of changing its tools", async () => {
    const run = await openRun("acme");
    await storeRun(run);
    const stub = ledgerStubOf(run);
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE run SET catalog_version = 'cat_0000000000000000'");
    });
    // A fresh instance reads the run as a deploy would find it.
    await restartDurableObject(stub);
    const { status, body } = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(status).toBe(409);
    expect(body.error).toMatchObject({
      code: "conflict_error",
      recommended_next_action: "stop",
      details: {
        run_catalog_version: "cat_0000000000000000",
        current_catalog_version: await catalog.version(),
      },
    });
    expect(body.error?.message).toContain("Open a new run");
    expect(await traceOf(run)).toEqual([]);
  });

  it("pins a run its open stored nothing of to the version its open showed, not the one of its first call", async () => {
    const run = await openRun("acme");
    // As if the open was answered by the deploy before this one.
    const earlier = await withPendingOpen(run, { catalog_version: "cat_0000000000000000" });
    const { status, body } = await callTool(earlier, "lookup_order", { order_id: "A1001" });
    expect(status).toBe(409);
    expect(body.error).toMatchObject({
      code: "conflict_error",
      details: { run_catalog_version: "cat_0000000000000000" },
    });
  });
});
