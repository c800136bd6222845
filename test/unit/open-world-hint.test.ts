import { describe, expect, it } from "vitest";
import { openWorldOf, toMcpTool } from "../../src/specs/mcp";
import { catalog, discoveryTools } from "../../src/tools";

const everyTool = [
  ...catalog.all(),
  ...[...new Set(catalog.all().map((tool) => tool.namespace))].flatMap((namespace) =>
    discoveryTools(namespace),
  ),
];

describe("openWorldHint derived from the catalog", () => {
  it("is true for every tool whose output holds third-party text, and for every declared open-world tool", () => {
    expect(everyTool.length).toBeGreaterThan(10);
    for (const tool of everyTool) {
      const hint = toMcpTool(tool).annotations.openWorldHint;
      if (tool.untrusted.length > 0) expect(hint, `${tool.namespace}.${tool.name}`).toBe(true);
      if (tool.open_world) expect(hint, `${tool.namespace}.${tool.name}`).toBe(true);
      expect(hint, `${tool.namespace}.${tool.name}`).toBe(tool.open_world || tool.untrusted.length > 0);
    }
  });

  it("marks the refund policy search open-world: it returns third-party text", () => {
    const search = catalog.all().find((tool) => tool.name === "search_refund_policy");
    expect(search?.untrusted.length).toBeGreaterThan(0);
    expect(search && toMcpTool(search).annotations.openWorldHint).toBe(true);
  });

  it("keeps a tool with only the tenant's own fields closed-world", () => {
    const ticket = catalog.all().find((tool) => tool.name === "lookup_ticket");
    expect(ticket?.untrusted).toEqual([]);
    expect(ticket && toMcpTool(ticket).annotations.openWorldHint).toBe(false);
  });

  it("reads untrusted fields alone as enough, whatever open_world says", () => {
    expect(openWorldOf({ open_world: false, untrusted: ["notes"] })).toBe(true);
    expect(openWorldOf({ open_world: false, untrusted: [] })).toBe(false);
    expect(openWorldOf({ open_world: true, untrusted: [] })).toBe(true);
  });
});
