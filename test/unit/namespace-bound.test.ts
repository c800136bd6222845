import { describe, expect, it } from "vitest";
import { loadCatalog, MAX_TOOLS_PER_NAMESPACE } from "../../src/catalog/catalog";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { rankTools } from "../../src/catalog/search";
import { specsFor } from "../../src/specs/formats";
import { catalog as product } from "../../src/tools";
import { MAX_FOUND_TOOLS } from "../../src/tools/discovery";

/**
 * What the bound on a namespace (MAX_TOOLS_PER_NAMESPACE) rests on: the two things the edge does
 * with a whole namespace in one request stay small at the bound. A namespace of that many tools of
 * the demo's size (its reads, copied under other names) is exported as specs in one answer and
 * ranked by `find_tools`; the numbers printed are the ones src/catalog/catalog.ts quotes.
 */
function wideNamespace(): ToolSpec[] {
  const reads = product
    .all()
    .filter((tool) => tool.builtin === null && tool.side_effect === "read" && tool.decision_context === null);
  return Array.from({ length: MAX_TOOLS_PER_NAMESPACE }, (_, index) => {
    const tool = reads[index % reads.length] as ToolSpec;
    return { ...tool, namespace: "wide", name: `${tool.name}_n${index}`, listed_by_default: index < 5 };
  });
}

describe(`a namespace of ${MAX_TOOLS_PER_NAMESPACE} tools`, () => {
  const wide = loadCatalog(wideNamespace());

  it("exports as specs in one answer well under a Worker's memory and CPU", () => {
    for (const format of ["openai", "mcp", "anthropic"] as const) {
      const began = performance.now();
      const specs = specsFor(wide, "wide", format);
      const ms = performance.now() - began;
      const bytes = new TextEncoder().encode(JSON.stringify(specs)).length;
      console.log(
        `GET /v1/tools, ${format}: ${specs.tools.length} tools, ${bytes} bytes, built in ${ms.toFixed(1)} ms`,
      );
      expect(specs.tools).toHaveLength(MAX_TOOLS_PER_NAMESPACE);
      expect(bytes).toBeLessThan(1024 * 1024);
    }
  });

  it("is ranked by find_tools in a few milliseconds a call, even with a query of the longest kind", () => {
    const tools = wide.tools("wide");
    const longest = "find the shipment of an order and the customer profile, tracking and refund policy "
      .repeat(3)
      .slice(0, 200);
    const perCall = (query: string) => {
      for (let round = 0; round < 20; round++) rankTools(tools, query, MAX_FOUND_TOOLS);
      const rounds = 50;
      const began = performance.now();
      for (let round = 0; round < rounds; round++) rankTools(tools, query, MAX_FOUND_TOOLS);
      return (performance.now() - began) / rounds;
    };
    const typical = perCall("track a parcel");
    const worst = perCall(longest);
    console.log(
      `find_tools over ${tools.length} tools: ${typical.toFixed(2)} ms a call ("track a parcel"), ${worst.toFixed(2)} ms (a 200-character query)`,
    );
    expect(rankTools(tools, longest, MAX_FOUND_TOOLS)).toHaveLength(MAX_FOUND_TOOLS);
    // Generous for a busy machine: what it guards is the order of magnitude, not a figure.
    expect(worst).toBeLessThan(50);
  });
});
