import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findRegions, lineDiff, writeRegion } from "../../scripts/readme/regions";
import { normalise, renderValidationError } from "../../scripts/readme/walkthrough";

function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "readme-regions-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const region = (name: string, body: string) => `<!-- generated:${name} -->\n${body}<!-- /generated -->\n`;

describe("generated regions of the Markdown", () => {
  it("are found by name in README.md or in a docs/ page, wherever a section moved", () => {
    const root = project({
      "README.md": `# title\n\n${region("token-table", "| a |\n")}\ntext\n`,
      "docs/agents/mcp.md": `## MCP\n\n${region("walkthrough-lookup-order", "```json\n{}\n```\n")}`,
    });
    const regions = findRegions(root);
    expect(regions.get("token-table")).toEqual({ name: "token-table", file: "README.md", body: "| a |\n" });
    expect(regions.get("walkthrough-lookup-order")?.file).toBe(join("docs", "agents", "mcp.md"));
  });

  it("refuses a name that occurs twice, naming both files", () => {
    const root = project({
      "README.md": region("token-table", "x\n"),
      "docs/specs.md": region("token-table", "y\n"),
    });
    expect(() => findRegions(root)).toThrow(/"token-table" is in README.md and again in docs\/specs.md/);
  });

  it("rewrites only the region's body, leaving the text around it and the markers as they were", () => {
    const root = project({ "README.md": `before\n${region("token-table", "old\n")}after\n` });
    writeRegion(root, "README.md", "token-table", "new\nlines\n");
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe(
      `before\n${region("token-table", "new\nlines\n")}after\n`,
    );
  });

  it("refuses to write a region the file does not hold", () => {
    const root = project({ "README.md": "no markers\n" });
    expect(() => writeRegion(root, "README.md", "token-table", "x\n")).toThrow(
      /no complete generated region "token-table"/,
    );
  });

  it("shows a difference as removed and added lines, with the unchanged ones around it", () => {
    const diff = lineDiff(
      "| format (8 tools) |\n| --- |\n| openai | 2,047 |\n",
      "| format (10 tools) |\n| --- |\n| openai | 2,407 |\n",
    );
    expect(diff.split("\n")).toEqual([
      "- | format (8 tools) |",
      "+ | format (10 tools) |",
      "  | --- |",
      "- | openai | 2,047 |",
      "+ | openai | 2,407 |",
      "  ",
    ]);
    expect(lineDiff("same\n", "same\n")).toBe("");
  });
});

describe("the walk-through's samples", () => {
  it("keep the prefix of ids and hide the milliseconds left, so two runs render alike", () => {
    expect(
      normalise({
        call_id: "call_2d54b92d004b47e9afc769bd",
        budget: { calls_left: 9, deadline_ms_left: 119153 },
      }),
    ).toEqual({ call_id: "call_…", budget: { calls_left: 9, deadline_ms_left: "…volatile…" } });
  });

  it("cut each hint after its first sentence and refuse an answer without an error", () => {
    const text = renderValidationError({
      outcome: "terminal_failure",
      error: {
        code: "validation_error",
        recommended_next_action: "fix_arguments",
        side_effect_confirmed: false,
        problems: [
          { field: "amount_cents", reason: "expected number, got string", hint: "In cents. At most 10." },
        ],
      },
    });
    expect(text).toContain('"hint":"In cents. …"');
    expect(() => renderValidationError({ outcome: "success", error: null })).toThrow(
      /error is not an object/,
    );
  });
});
