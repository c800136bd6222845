import { describe, expect, it } from "vitest";
import { runTools } from "../../src/machine/grants";
import { specsOfTools } from "../../src/specs/formats";
import { runSpecs } from "../../src/specs/tool-specs";
import { catalog, discoveryTools } from "../../src/tools";

/**
 * A run's tool list, in its open answer, its MCP listing and GET /v1/tools: built once per isolate
 * for each set, and always exactly the set's tools.
 */
describe("a run's tool list", () => {
  const subset = { namespace: "support", tools: ["support.lookup_order", "shipping.lookup_shipment"] };

  it("is built once for a subset and served again for the same set", () => {
    const first = runSpecs(subset, "jsonschema");
    expect(runSpecs({ ...subset, tools: [...subset.tools] }, "jsonschema")).toBe(first);
    expect(runSpecs(subset, "mcp", "opened")).toBe(runSpecs(subset, "mcp", "opened"));
  });

  it("is the set's own list: what assembling it afresh gives, per format and per set", () => {
    for (const format of ["jsonschema", "mcp", "openai"] as const) {
      const fresh = specsOfTools("support", runTools(catalog, subset, discoveryTools("support")), format);
      expect(runSpecs(subset, format)).toEqual(fresh);
    }
    const added = { ...subset, added_tools: ["support.get_customer_profile"] };
    const names = (set: typeof added) => runSpecs(set, "jsonschema").tools.map((tool) => tool.name);
    expect(names(added)).toContain("get_customer_profile");
    expect(runSpecs(added, "jsonschema", "opened")).toBe(runSpecs(subset, "jsonschema", "opened"));
    expect(names({ ...subset, added_tools: [] })).not.toContain("get_customer_profile");
  });
});
