import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkLinks, projectMarkdown } from "../../scripts/readme/links";
import { anchors, headings, links, section, slug } from "../../scripts/readme/markdown";

function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "doc-links-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("GitHub's heading anchors", () => {
  it.each([
    ["HTTP contract", "http-contract"],
    [
      "Effects across runs: one business effect, capped value",
      "effects-across-runs-one-business-effect-capped-value",
    ],
    ["The run ledger's state machine", "the-run-ledgers-state-machine"],
    ["Tools per task: a subset, find_tools and use_tool", "tools-per-task-a-subset-find_tools-and-use_tool"],
    ["The 2026-07-28 revision", "the-2026-07-28-revision"],
    ["Où — ça va?", "où--ça-va"],
    ["a  b", "a--b"],
  ])("slug of %j is %j", (text, expected) => {
    expect(slug(text)).toBe(expected);
  });

  it("are taken from the rendered text: code spans, emphasis and links reduced to their words", () => {
    const page = "# Tools as data: `catalog/`\n\n## **Bold** and [a link](x.md)\n";
    expect(headings(page).map((heading) => heading.anchor)).toEqual([
      "tools-as-data-catalog",
      "bold-and-a-link",
    ]);
  });

  it("number a repeated heading -1, -2 in order", () => {
    const page = "# Deploying\n\n## Steps\n\n## Steps\n\n### Steps\n";
    expect(headings(page).map((heading) => heading.anchor)).toEqual([
      "deploying",
      "steps",
      "steps-1",
      "steps-2",
    ]);
  });

  it("ignore a # line inside a fenced block, and count HTML ids as anchors", () => {
    const page = '# Title\n\n```sh\n# not a heading\nnpm test\n```\n\n<a id="here"></a>\n';
    expect([...anchors(page)]).toEqual(["title", "here"]);
  });
});

describe("a section by its title", () => {
  const page = "# Page\n\nintro\n\n## One\n\nfirst\n\n### Inner\n\ninner\n\n## Two\n\nsecond\n";

  it("runs to the next heading of the same or a higher level, keeping deeper ones", () => {
    expect(section(page, "One")).toBe("\nfirst\n\n### Inner\n\ninner\n");
    expect(section(page, "Two")).toBe("\nsecond\n");
  });

  it("is undefined when no heading has the title", () => {
    expect(section(page, "Three")).toBeUndefined();
  });
});

describe("links of a page", () => {
  it("are the inline links and images outside code, with their lines", () => {
    const page = [
      "See [the contract](docs/http-contract.md#http-contract) and ![shot](screenshots/a.png).",
      "`[not](a-link.md)` and",
      "```md",
      "[nor](this.md)",
      "```",
      "[across",
      "lines](#anchor) [out](https://example.com)",
    ].join("\n");
    expect(links(page)).toEqual([
      { target: "docs/http-contract.md#http-contract", line: 1, image: false },
      { target: "screenshots/a.png", line: 1, image: true },
      { target: "#anchor", line: 6, image: false },
      { target: "https://example.com", line: 7, image: false },
    ]);
  });
});

describe("the link check", () => {
  const pages = {
    "README.md":
      "# Product\n\n[Guarantees](docs/guarantees.md#task-keys) · [Layout](docs/layout.md) · [site](https://x.dev)\n",
    "docs/guarantees.md": "# Guarantees\n\n## Task keys\n\n[Source](../src/app.ts) · [below](#task-keys)\n",
    "docs/layout.md": "# Layout\n\n[Back](../README.md#product)\n",
    "src/app.ts": "export {};\n",
    "node_modules/pkg/README.md": "[broken](nowhere.md)\n",
  };

  it("passes pages whose every relative link and anchor resolves, from README.md and from docs/", () => {
    const root = project(pages);
    expect(projectMarkdown(root)).toEqual([
      "README.md",
      join("docs", "guarantees.md"),
      join("docs", "layout.md"),
    ]);
    expect(checkLinks(root)).toEqual([]);
  });

  it("names a missing file, where the link is and what it resolved to", () => {
    const root = project({ ...pages, "docs/layout.md": "# Layout\n\n[Source](src/app.ts)\n" });
    expect(checkLinks(root)).toEqual([
      { at: "docs/layout.md:3", target: "src/app.ts", reason: "docs/src/app.ts does not exist" },
    ]);
  });

  it("names an anchor the page does not have, listing the anchors it has", () => {
    const root = project({ ...pages, "README.md": "# Product\n\n[Keys](docs/guarantees.md#task-key)\n" });
    expect(checkLinks(root)).toEqual([
      {
        at: "README.md:3",
        target: "docs/guarantees.md#task-key",
        reason:
          "docs/guarantees.md has no heading whose anchor is #task-key (its anchors: #guarantees, #task-keys)",
      },
    ]);
  });

  it("checks an anchor within the same page, and refuses a link out of the project", () => {
    const root = project({
      ...pages,
      "docs/layout.md": "# Layout\n\n[Up](#layout) [Gone](#graph) [Out](../../x.md)\n",
    });
    expect(checkLinks(root).map((problem) => problem.target)).toEqual(["#graph", "../../x.md"]);
  });
});
