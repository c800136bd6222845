import { describe, expect, it } from "vitest";
import { CatalogError, catalogProblems, loadCatalog } from "../../src/catalog/catalog";
import { TIMEOUT_RULE } from "../../src/catalog/timeout-rules";
import { catalog } from "../../src/tools";

const tools = catalog.all();
const byName = (name: string) => {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no ${name} in the catalog`);
  return tool;
};

describe("catalog rule: timeouts by side-effect class", () => {
  it("holds for the product catalog: relaxed reads, strict keyed calls", () => {
    expect(catalogProblems(tools).problems).toEqual([]);
    for (const tool of tools.filter((candidate) => !candidate.builtin)) {
      if (tool.side_effect === "read")
        expect(tool.timeout_ms, tool.name).toBeGreaterThanOrEqual(TIMEOUT_RULE.readMinMs);
      else expect(tool.timeout_ms, tool.name).toBeLessThanOrEqual(TIMEOUT_RULE.keyedMaxMs);
    }
  });

  it("refuses a read whose timeout is below the minimum, naming the tool, the field and what is allowed", () => {
    const short = { ...byName("lookup_order"), timeout_ms: 2_500 };
    const problems = catalogProblems([short]).problems.filter((problem) => problem.field === "timeout_ms");
    expect(problems).toEqual([
      {
        tool: "lookup_order",
        field: "timeout_ms",
        message: expect.stringContaining(`a read's timeout_ms must be at least ${TIMEOUT_RULE.readMinMs}`),
      },
    ]);
    expect(() => loadCatalog([short])).toThrow(CatalogError);
  });

  it("refuses a write or destructive call whose timeout is not strict", () => {
    for (const name of ["create_internal_ticket", "issue_refund", "draft_customer_email"]) {
      const loose = { ...byName(name), timeout_ms: TIMEOUT_RULE.keyedMaxMs + 1 };
      const [problem] = catalogProblems([loose]).problems.filter(
        (candidate) => candidate.field === "timeout_ms",
      );
      expect(problem?.message, name).toContain(`timeout_ms must be at most ${TIMEOUT_RULE.keyedMaxMs}`);
      expect(problem?.message, name).toContain("never retried blindly");
    }
  });

  it("lets a test catalog scale the rule down, and still enforces it", () => {
    const rule = { readMinMs: 1_000, keyedMaxMs: 1_000 };
    const scaled = tools.map((tool) => ({ ...tool, timeout_ms: Math.min(tool.timeout_ms, 1_000) }));
    expect(catalogProblems(scaled, rule).problems).toEqual([]);
    const tooShort = scaled.map((tool) =>
      tool.name === "lookup_order" ? { ...tool, timeout_ms: 500 } : tool,
    );
    expect(catalogProblems(tooShort, rule).problems.map((problem) => problem.tool)).toEqual(["lookup_order"]);
  });

  it("leaves built-in tools alone: they wait for no upstream", () => {
    const builtin = tools.find((tool) => tool.builtin);
    expect(builtin?.timeout_ms).toBeLessThan(TIMEOUT_RULE.readMinMs);
    expect(catalogProblems(builtin ? [builtin] : []).problems).toEqual([]);
  });
});
