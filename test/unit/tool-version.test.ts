import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { computeCatalogVersion, loadCatalog } from "../../src/catalog/catalog";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { changedParts, computeToolVersion, toolVersionWith } from "../../src/catalog/tool-version";
import { servedToolVersions } from "../../src/generated/catalog";
import { catalog } from "../../src/tools";
import { widgetLookup } from "./support/widget-tool";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const changed = (overrides: Partial<ToolSpec>): ToolSpec => ({ ...widgetLookup, ...overrides });

describe("a tool's version", () => {
  it("is a digest of its contract: the same for the same tool, in Node and in the Worker's hash alike", async () => {
    const version = await computeToolVersion(widgetLookup);
    expect(version.version).toMatch(/^tv_[0-9a-f]{16}$/);
    expect(Object.values(version.parts).every((part) => /^[0-9a-f]{8}$/.test(part))).toBe(true);
    expect(toolVersionWith(widgetLookup, sha256)).toEqual(version);
    expect(await computeToolVersion({ ...widgetLookup })).toEqual(version);
  });

  it("names the part of the contract that changed, and only that part", async () => {
    const before = await computeToolVersion(widgetLookup);
    const cases: Array<[Partial<ToolSpec>, string[]]> = [
      [
        {
          description: { ...widgetLookup.description, does: "Returns one widget and its stock level by id." },
        },
        ["description"],
      ],
      [
        {
          input: z.strictObject({
            widget_id: z.string().describe("The widget id, such as W1."),
            warehouse: z.string().optional().describe("Which warehouse's stock."),
          }),
        },
        ["input"],
      ],
      [{ side_effect: "write" }, ["class"]],
      [{ timeout_ms: 9_000 }, ["upstream"]],
      [{ untrusted: ["widget_id"], trusted_text: {} }, ["trust"]],
      [{ approval_roles: ["stock_lead"] }, ["approval"]],
      [{ version: "2" }, ["version"]],
    ];
    for (const [overrides, parts] of cases) {
      const after = await computeToolVersion(changed(overrides));
      expect(after.version).not.toBe(before.version);
      expect(changedParts(before.parts, after.parts)).toEqual(parts);
    }
  });

  it("reads a declared tool's rules as data: a changed threshold setting is a changed policy", async () => {
    const declared = {
      request: { upstream: "WIDGETS_API", method: "GET", path: "/widgets/{widget_id}" },
      policies: [{ max_from_setting: { field: "amount_cents", setting: "max_refund_cents" } }],
      postcondition: null,
      freshness: null,
      decision_context: null,
      settle: null,
    };
    const first = await computeToolVersion(changed({ declared }));
    const second = await computeToolVersion(
      changed({
        declared: {
          ...declared,
          policies: [{ max_from_setting: { field: "amount_cents", setting: "max_widget_cents" } }],
        },
      }),
    );
    expect(changedParts(first.parts, second.parts)).toEqual(["policies"]);
  });

  it("leaves out a deprecation notice: deprecating a tool changes none of its calls", async () => {
    const deprecated = changed({
      deprecated: {
        since: "2026-01-01",
        sunset: "2026-12-01",
        use_instead: "lookup_widget",
        why: "Widgets are looked up in bulk now.",
      },
    });
    expect((await computeToolVersion(deprecated)).version).toBe(
      (await computeToolVersion(widgetLookup)).version,
    );
  });

  it("changes the catalog's version with one tool's, and no other tool's version with it", async () => {
    const other = changed({ name: "lookup_gadget" });
    const edited = changed({ name: "lookup_gadget", title: "Look up a gadget" });
    const before = loadCatalog([widgetLookup, other]);
    const after = loadCatalog([widgetLookup, edited]);
    expect(await after.version()).not.toBe(await before.version());
    expect(await after.toolVersion(widgetLookup)).toEqual(await before.toolVersion(widgetLookup));
  });

  it("serves each tool's version as compile computed it, which its contract hashes to here", async () => {
    for (const tool of catalog.all()) {
      const ref = `${tool.namespace}.${tool.name}`;
      expect(await catalog.toolVersion(tool), ref).toEqual(servedToolVersions[ref]);
      expect(await computeToolVersion(tool), ref).toEqual(servedToolVersions[ref]);
    }
    expect(await computeCatalogVersion(catalog.all())).toBe(await catalog.version());
  });
});
