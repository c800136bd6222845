import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  CatalogError,
  catalogProblems,
  lazyCatalog,
  loadCatalog,
  MAX_TOOLS_PER_NAMESPACE,
} from "../../src/catalog/catalog";
import { MAX_LISTED_TOOLS } from "../../src/catalog/default-tools";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { widgetLookup as validTool } from "./support/widget-tool";

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
      /lookup_widget.*side_effect must be one of read, draft, write, destructive/,
    );
  });

  it("refuses a side effect class outside read, draft, write and destructive", () => {
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

  it.each(["constructor", "prototype"])(
    "refuses an input field named %s, which every call would be refused for",
    (name) => {
      const input = z.strictObject({
        filter: z.strictObject({ [name]: z.string().describe("A name.") }).describe("Filter by attributes."),
      });
      expect(loadError([broken({ input })])).toMatch(
        `field "filter.${name}" has a reserved name; every call's arguments are refused holding it`,
      );
    },
  );

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

  it("refuses an inline result larger than one kept row may hold, or not a whole positive size", () => {
    expect(loadError([broken({ max_result_bytes: 8 * 1024 * 1024 })])).toMatch(
      /max_result_bytes must be a whole number of bytes between 1 and 262144/,
    );
    expect(loadError([broken({ max_result_bytes: 0 })])).toMatch(/max_result_bytes must be/);
    expect(loadError([broken({ max_result_bytes: 1.5 })])).toMatch(/max_result_bytes must be/);
    expect(catalogProblems([broken({ max_result_bytes: 256 * 1024 })]).problems).toEqual([]);
  });

  it("refuses a tool without an upstream binding", () => {
    expect(loadError([broken({ upstream: { request: () => ({ method: "GET", path: "/" }) } })])).toMatch(
      /upstream.binding must name the wrangler.toml binding/,
    );
  });

  it("refuses a built-in write: only reads may be answered by the proxy itself, with no upstream", () => {
    const builtinWrite = broken({
      side_effect: "write",
      no_postcondition: "A test write: this rule is checked before the postcondition's.",
      upstream: null,
      builtin: () => ({ ok: true, data: {} }),
    });
    expect(loadError([builtinWrite])).toMatch(/only read tools may be built in/);
  });

  it("refuses a built-in tool that also names an upstream", () => {
    expect(loadError([broken({ builtin: () => ({ ok: true, data: {} }) })])).toMatch(
      /a built-in tool has no upstream/,
    );
  });

  describe("postconditions of writes", () => {
    const postcondition = {
      tool: "lookup_widget",
      args: (args: Record<string, unknown>) => ({ widget_id: args.widget_id }),
      verify: () => ({ ok: true as const }),
    };

    it.each(["write", "destructive"])(
      "refuses a %s tool with neither observe nor no_postcondition",
      (sideEffect) => {
        expect(loadError([validTool, broken({ name: "restock_widget", side_effect: sideEffect })])).toMatch(
          new RegExp(
            `tool "restock_widget": a ${sideEffect} tool needs a postcondition \\(observe: .*\\) or no_postcondition: "<documented reason>"`,
          ),
        );
      },
    );

    it("loads a write that reads back its effect, or that documents why it cannot", () => {
      const observed = broken({ name: "restock_widget", side_effect: "write", observe: postcondition });
      const excused = broken({
        name: "ship_widget",
        side_effect: "destructive",
        no_postcondition: "The shipping API offers no read of a shipment once it is handed over.",
      });
      const catalog = loadCatalog([validTool, observed, excused]);
      expect(catalog.find("widgets", "restock_widget")?.observe?.tool).toBe("lookup_widget");
      expect(catalog.find("widgets", "ship_widget")?.no_postcondition).toMatch(/no read of a shipment/);
      // Reads need neither.
      expect(catalog.find("widgets", "lookup_widget")?.observe).toBeNull();
    });

    it("refuses an empty or token reason", () => {
      for (const reason of ["", "   ", "n/a"]) {
        expect(
          loadError([
            validTool,
            broken({ name: "ship_widget", side_effect: "write", no_postcondition: reason }),
          ]),
        ).toMatch(/no_postcondition must give the documented reason/);
      }
    });

    it("refuses both a postcondition and a reason for not having one", () => {
      const both = broken({
        name: "restock_widget",
        side_effect: "write",
        observe: postcondition,
        no_postcondition: "The warehouse API offers no read of stock levels at all.",
      });
      expect(loadError([validTool, both])).toMatch(/declares both observe and no_postcondition/);
    });

    it("refuses a postcondition whose read is not a read tool of the same namespace", () => {
      const missing = broken({
        name: "restock_widget",
        side_effect: "write",
        observe: { ...postcondition, tool: "lookup_gadget" },
      });
      expect(loadError([validTool, missing])).toMatch(
        /postcondition reads with "lookup_gadget", which is not a tool of namespace "widgets"/,
      );
      const elsewhere = broken({ name: "lookup_widget", namespace: "gadgets" });
      const observed = broken({ name: "restock_widget", side_effect: "write", observe: postcondition });
      expect(loadError([elsewhere, observed])).toMatch(/which is not a tool of namespace "widgets"/);
      const writer = broken({
        name: "recount_widget",
        side_effect: "write",
        no_postcondition: "The warehouse API offers no read of stock levels at all.",
      });
      const readsWithWrite = broken({
        name: "restock_widget",
        side_effect: "write",
        observe: { ...postcondition, tool: "recount_widget" },
      });
      expect(loadError([writer, readsWithWrite])).toMatch(
        /postcondition tool "recount_widget" must be a read, not write/,
      );
    });

    it("refuses a decision context that does not read with a read tool of the namespace", () => {
      const context = { tool: "lookup_gadget", args: () => ({}), facts: () => [] };
      const missing = broken({
        name: "restock_widget",
        side_effect: "write",
        observe: postcondition,
        decision_context: context,
      });
      expect(loadError([validTool, missing])).toMatch(
        /decision context reads with "lookup_gadget", which is not a read tool of namespace "widgets"/,
      );
      const writer = broken({
        name: "recount_widget",
        side_effect: "write",
        no_postcondition: "The warehouse API offers no read of stock levels at all.",
      });
      const readsWithWrite = broken({
        name: "restock_widget",
        side_effect: "write",
        observe: postcondition,
        decision_context: { ...context, tool: "recount_widget" },
      });
      expect(loadError([validTool, writer, readsWithWrite])).toMatch(
        /decision context reads with "recount_widget"/,
      );
      const noFacts = broken({
        name: "restock_widget",
        side_effect: "write",
        observe: postcondition,
        decision_context: { tool: "lookup_widget", args: () => ({}) },
      });
      expect(loadError([validTool, noFacts])).toMatch(
        /decision_context needs an args mapping and a facts function/,
      );
    });

    it("holds the shipped catalog to the rule: every write and destructive tool says how it is checked", async () => {
      const { catalog } = await import("../../src/tools");
      const writes = catalog
        .all()
        .filter((tool) => tool.side_effect === "write" || tool.side_effect === "destructive");
      expect(writes.length).toBeGreaterThan(0);
      for (const tool of writes) {
        expect(tool.observe !== null || tool.no_postcondition !== null, tool.name).toBe(true);
      }
      expect(catalog.find("support", "create_internal_ticket")?.observe?.tool).toBe("lookup_ticket");
      expect(catalog.find("support", "issue_refund")?.observe?.tool).toBe("lookup_order");
    });
  });

  describe("output trust: every free-text output field is classified", () => {
    const withOutput = (output: z.ZodType, extra: Record<string, unknown> = {}) =>
      broken({ output, trusted_text: {}, untrusted: [], sensitive: {}, ...extra });

    it("refuses a tool with an unclassified free-text field, naming the field", () => {
      const tool = withOutput(z.object({ widget_id: z.string(), notes: z.string() }), {
        trusted_text: { widget_id: "an id the widget API issues" },
      });
      expect(loadError([tool])).toMatch(
        /tool "lookup_widget": output field "notes" is free text but not classified; list it in untrusted/,
      );
    });

    it("finds free text inside arrays, nested objects and optional fields", () => {
      const output = z.object({ reviews: z.array(z.object({ text: z.string().optional() })) });
      expect(loadError([withOutput(output)])).toMatch(/output field "reviews\[\]\.text" is free text/);
      expect(() => loadCatalog([withOutput(output, { untrusted: ["reviews[].text"] })])).not.toThrow();
    });

    it("accepts a field declared untrusted, trusted with a reason, or masked as sensitive", () => {
      const output = z.object({ a: z.string(), b: z.string(), c: z.string() });
      const tool = withOutput(output, {
        untrusted: ["a"],
        trusted_text: { b: "a code from a fixed list" },
        sensitive: { c: "email" },
      });
      expect(() => loadCatalog([tool])).not.toThrow();
    });

    it("does not count enums, literals, regex-checked or formatted strings as free text", () => {
      const output = z.object({
        state: z.enum(["open", "closed"]),
        kind: z.literal("widget"),
        sku: z.string().regex(/^W\d+$/),
        at: z.iso.datetime(),
        count: z.number(),
      });
      expect(() => loadCatalog([withOutput(output)])).not.toThrow();
    });

    it("refuses a trusted_text entry without a reason, and a declaration naming no string field", () => {
      const output = z.object({ widget_id: z.string() });
      expect(loadError([withOutput(output, { trusted_text: { widget_id: " " } })])).toMatch(
        /trusted_text "widget_id" needs a reason/,
      );
      expect(
        loadError([
          withOutput(output, { untrusted: ["widget_notes"], trusted_text: { widget_id: "an id" } }),
        ]),
      ).toMatch(/"widget_notes" is declared untrusted or trusted_text but is not a string field/);
    });

    it("classifies the demo catalog's third-party text as untrusted", async () => {
      const { catalog } = await import("../../src/tools");
      expect(catalog.find("support", "search_refund_policy")?.untrusted).toEqual([
        "results[].title",
        "results[].summary",
      ]);
      expect(catalog.find("support", "lookup_order")?.untrusted).toContain("customer_note");
      expect(catalog.find("support", "get_customer_profile")?.untrusted).toEqual([
        "recent_messages[].subject",
        "recent_messages[].body",
      ]);
    });
  });

  it("refuses two tools with the same name in a namespace", () => {
    expect(loadError([validTool, validTool])).toMatch(
      /"lookup_widget" is defined twice in namespace "widgets"/,
    );
  });

  it(`refuses more than ${MAX_TOOLS_PER_NAMESPACE} tools in a namespace, and holds that many`, () => {
    const many = Array.from({ length: MAX_TOOLS_PER_NAMESPACE + 1 }, (_, index) =>
      broken({ name: `lookup_widget${index}`, listed_by_default: index < 3 }),
    );
    expect(MAX_TOOLS_PER_NAMESPACE).toBe(200);
    expect(loadError(many)).toMatch(/namespace "widgets" has more than 200 tools, the most the edge serves/);
    const catalog = loadCatalog(many.slice(0, MAX_TOOLS_PER_NAMESPACE));
    expect(catalog.tools("widgets")).toHaveLength(MAX_TOOLS_PER_NAMESPACE);
    expect(catalog.listedByDefault("widgets")).toEqual([
      "lookup_widget0",
      "lookup_widget1",
      "lookup_widget2",
    ]);
  });

  it(`asks a namespace of more than ${MAX_LISTED_TOOLS} tools which ones a run lists, at most ${MAX_LISTED_TOOLS}`, () => {
    const tools = (count: number, listed: (index: number) => boolean) =>
      Array.from({ length: count }, (_, index) =>
        broken({ name: `lookup_widget${index}`, listed_by_default: listed(index) }),
      );
    // Ten tools: every one is listed, none needs declaring.
    expect(loadCatalog(tools(MAX_LISTED_TOOLS, () => false)).listedByDefault("widgets")).toBeNull();
    expect(loadError(tools(MAX_LISTED_TOOLS + 1, () => false))).toMatch(
      /namespace "widgets" has 11 tools, more than a run lists at once \(10\): declare default_tools/,
    );
    expect(loadError(tools(30, (index) => index <= MAX_LISTED_TOOLS))).toMatch(
      /namespace "widgets" lists 11 tools by default; at most 10/,
    );
    expect(loadCatalog(tools(30, (index) => index === 7)).listedByDefault("widgets")).toEqual([
      "lookup_widget7",
    ]);
  });

  it("makes the default set part of the catalog's version, and leaves a catalog without one as it was", async () => {
    const plain = await loadCatalog([validTool]).version();
    expect(await loadCatalog([broken({ listed_by_default: false })]).version()).toBe(plain);
    expect(await loadCatalog([broken({ listed_by_default: true })]).version()).not.toBe(plain);
  });

  it("refuses a deprecation whose successor is not served or whose sunset is not after it", () => {
    const notice = {
      since: "2026-01-01",
      sunset: "2026-06-01",
      use_instead: "lookup_widget",
      why: "Widgets are listed in bulk now.",
    };
    const old = (deprecated: Record<string, string>) => broken({ name: "lookup_widget_v0", deprecated });
    expect(() => loadCatalog([validTool, old(notice)])).not.toThrow();
    expect(loadError([validTool, old({ ...notice, use_instead: "lookup_gizmo" })])).toMatch(
      /deprecated.use_instead names "lookup_gizmo", which is not a tool of the catalog/,
    );
    expect(loadError([validTool, old({ ...notice, sunset: "2025-12-31" })])).toMatch(
      /deprecated.sunset \(2025-12-31\) must come after deprecated.since \(2026-01-01\)/,
    );
    expect(loadError([validTool, old({ ...notice, use_instead: "lookup_widget_v0" })])).toMatch(
      /names the tool itself/,
    );
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

describe("a catalog loaded on first use", () => {
  it("gives the version it was compiled with once loaded, and still throws when broken", async () => {
    let built = 0;
    const compiled = lazyCatalog(
      () => {
        built++;
        return [validTool];
      },
      undefined,
      "structure",
      "cat_0123456789abcdef",
    );
    expect(await compiled.version()).toBe("cat_0123456789abcdef");
    expect(built).toBe(1);
    const broken = lazyCatalog(() => [{ ...validTool, timeout_ms: 0 }], undefined, "structure", "cat_x");
    expect(() => broken.version()).toThrow(CatalogError);
  });

  it("builds nothing until first used, then serves its tools", () => {
    let built = 0;
    const catalog = lazyCatalog(() => {
      built += 1;
      return [validTool];
    });
    expect(built).toBe(0);
    expect(catalog.find("widgets", "lookup_widget")).toBeDefined();
    expect(catalog.all()).toHaveLength(1);
    expect(built).toBe(1);
  });

  it("throws the broken rule at every use, so a bad catalog never serves", () => {
    const catalog = lazyCatalog(() => [broken({ side_effect: "maybe" })]);
    for (let use = 0; use < 2; use++) {
      expect(() => catalog.all()).toThrow(CatalogError);
      expect(() => catalog.find("widgets", "lookup_widget")).toThrow(/side_effect must be one of/);
    }
  });

  it("checks the structural rules without building schemas, and leaves the schema walks to compile", () => {
    const loose = broken({ input: z.object({ widget_id: z.string() }) });
    // The structure alone passes: the walks over the schemas are what refuses a loose input.
    expect(catalogProblems([loose], undefined, "structure").problems).toEqual([]);
    expect(catalogProblems([loose]).problems.map((problem) => problem.field)).toContain("input");
    const misnamed = broken({ name: "Widget" });
    expect(() => lazyCatalog(() => [misnamed], undefined, "structure").all()).toThrow(/snake_case/);
    let reads = 0;
    const counted = Object.defineProperty({ ...validTool }, "input", {
      get() {
        reads += 1;
        return validTool.input;
      },
    });
    lazyCatalog(() => [counted], undefined, "structure").all();
    expect(reads).toBe(0);
  });

  it("leaves the arguments an effect identity and value name to compile: checking them builds the input", () => {
    let reads = 0;
    /** `overrides` of the widget tool, whose input counts its reads. */
    const counted = (overrides: Record<string, unknown>): ToolSpec =>
      Object.defineProperty(broken(overrides), "input", {
        get() {
          reads += 1;
          return validTool.input;
        },
      });
    const refund = {
      name: "refund_widget",
      side_effect: "write",
      no_postcondition: "A test write: its rules of effect are what is checked here.",
      effect: { fields: ["order"], window_ms: 60_000 },
      value: { field: "cents", currency: "USD", subject: "customer" },
    };
    const fieldsOf = (spec: ToolSpec, rules?: "structure") =>
      catalogProblems([spec], undefined, rules).problems.map((problem) => problem.field);
    // All rules refuse the names that are not arguments, reading the input to know its fields...
    expect(fieldsOf(counted(refund))).toEqual(["effect.identity[0]", "value.field", "value.subject"]);
    expect(reads).toBeGreaterThan(0);
    // ...and a catalog compile checked with all of them loads without building the tool's input.
    reads = 0;
    const loaded = lazyCatalog(() => [counted(refund)], undefined, "structure");
    expect(loaded.find("widgets", "refund_widget")).toBeDefined();
    // The rules that name no argument still hold at load: a currency, a window, a read with an effect.
    const misdeclared = counted({
      ...refund,
      effect: { fields: ["order"], window_ms: 1_500 },
      value: { field: "cents", currency: "usd", subject: null },
    });
    expect(fieldsOf(misdeclared, "structure")).toEqual(["effect.window_s", "value.currency"]);
    expect(fieldsOf(counted({ effect: { fields: null, window_ms: 60_000 } }), "structure")).toEqual([
      "effect",
    ]);
    expect(reads).toBe(0);
  });
});
