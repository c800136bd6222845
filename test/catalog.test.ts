import { describe, expect, it } from "vitest";
import * as z from "zod";
import { CatalogError, loadCatalog, MAX_TOOLS_PER_NAMESPACE } from "../src/catalog/catalog";
import { defineTool, type ToolSpec } from "../src/catalog/define-tool";

const validTool = defineTool({
  name: "lookup_widget",
  namespace: "widgets",
  version: "1",
  title: "Look up a widget",
  side_effect: "read",
  description: {
    does: "Returns one widget by id with its current stock level.",
    use_when: "You need facts about a widget, e.g. lookup_widget({widget_id: 'W1'}).",
    avoid_when: "You want to change a widget; this tool only reads.",
    side_effects: "None. Safe to call again.",
  },
  input: z.strictObject({ widget_id: z.string().describe("The widget id, such as W1.") }),
  output: z.object({ widget_id: z.string() }),
  upstream: {
    binding: "WIDGETS_API",
    request: (args) => ({ method: "GET", path: `/widgets/${args.widget_id}` }),
  },
  timeout_ms: 1_000,
});

/** A copy of the valid tool with some parts replaced, as a careless definition would have them. */
function broken(overrides: Record<string, unknown>): ToolSpec {
  return { ...validTool, ...overrides } as ToolSpec;
}

function loadError(specs: ToolSpec[]): string {
  try {
    loadCatalog(specs);
  } catch (error) {
    expect(error).toBeInstanceOf(CatalogError);
    return (error as Error).message;
  }
  throw new Error("the catalog loaded, but it should have refused");
}

describe("catalog loading", () => {
  it("loads a complete tool and finds it only in its own namespace", () => {
    const catalog = loadCatalog([validTool]);
    expect(catalog.find("widgets", "lookup_widget")).toBeDefined();
    expect(catalog.find("support", "lookup_widget")).toBeUndefined();
  });

  it("refuses a tool without a side effect class", () => {
    expect(loadError([broken({ side_effect: undefined })])).toMatch(
      /lookup_widget.*side_effect must be one of read, write, destructive/,
    );
  });

  it("refuses a side effect class outside read, write and destructive", () => {
    expect(loadError([broken({ side_effect: "sync" })])).toMatch(/side_effect must be one of/);
  });

  it.each([
    "lookupWidget",
    "widget",
    "Lookup_widget",
    "lookup-widget",
    "lookup_widget_",
    `lookup_${"w".repeat(60)}`,
  ])("refuses the name %s, which is not snake_case verb_noun", (name) => {
    expect(loadError([broken({ name })])).toMatch(/name must be snake_case verb_noun/);
  });

  it.each(["does", "use_when", "avoid_when", "side_effects"])(
    "refuses a description without its %s part",
    (part) => {
      const description = { ...validTool.description, [part]: "" };
      expect(loadError([broken({ description })])).toMatch(new RegExp(`description\\.${part} is missing`));
    },
  );

  it("refuses an input schema that is not strict", () => {
    const input = z.object({ widget_id: z.string().describe("The widget id.") });
    expect(loadError([broken({ input })])).toMatch(/input schema is not strict/);
  });

  it("refuses a nested object that is not strict", () => {
    const input = z.strictObject({
      filter: z.object({ color: z.string().describe("A color.") }).describe("Filter by attributes."),
    });
    expect(loadError([broken({ input })])).toMatch(/object at "filter" is not strict/);
  });

  it("refuses an input field without a description", () => {
    const input = z.strictObject({ widget_id: z.string() });
    expect(loadError([broken({ input })])).toMatch(/field "widget_id" has no description/);
  });

  it("refuses a tool without a timeout", () => {
    expect(loadError([broken({ timeout_ms: undefined })])).toMatch(/timeout_ms must be a number/);
  });

  it("refuses a timeout beyond the maximum", () => {
    expect(loadError([broken({ timeout_ms: 120_000 })])).toMatch(/timeout_ms must be a number between 1 and/);
  });

  it("refuses a tool without an upstream binding", () => {
    expect(loadError([broken({ upstream: { request: validTool.upstream.request } })])).toMatch(
      /upstream.binding must name the wrangler.toml binding/,
    );
  });

  it("refuses a write served by the ledger itself: only reads may skip the upstream", () => {
    const ledgerWrite = broken({
      side_effect: "write",
      upstream: { binding: "@run-ledger", request: validTool.upstream.request },
    });
    expect(loadError([ledgerWrite])).toMatch(/only read tools may use the ledger's own binding @run-ledger/);
  });

  it("refuses two tools with the same name in a namespace", () => {
    expect(loadError([validTool, validTool])).toMatch(
      /"lookup_widget" is defined twice in namespace "widgets"/,
    );
  });

  it(`refuses more than ${MAX_TOOLS_PER_NAMESPACE} tools in a namespace`, () => {
    const many = Array.from({ length: MAX_TOOLS_PER_NAMESPACE + 1 }, (_, index) =>
      broken({ name: `lookup_widget${index}` }),
    );
    expect(loadError(many)).toMatch(/namespace "widgets" has more than 10 tools/);
    expect(() => loadCatalog(many.slice(0, MAX_TOOLS_PER_NAMESPACE))).not.toThrow();
  });

  it("gives the catalog a content version that changes when a tool's contract does", async () => {
    const before = await loadCatalog([validTool]).version();
    const same = await loadCatalog([validTool]).version();
    const after = await loadCatalog([broken({ version: "2" })]).version();
    expect(before).toMatch(/^cat_[0-9a-f]{16}$/);
    expect(same).toBe(before);
    expect(after).not.toBe(before);
  });
});
