// `npm run lint`: every relative link and #anchor of the project's Markdown (README.md, docs/ and
// the other pages) resolves: the file exists, and an anchor into a page is one of its headings'
// GitHub anchors (scripts/readme/links.ts). Exits 1 naming each broken link, where it is and why.
import { tsImport } from "tsx/esm/api";
import { root } from "./local-stack.mjs";

const { checkLinks, projectMarkdown } = await tsImport("./readme/links.ts", import.meta.url);
const files = projectMarkdown(root);
const problems = checkLinks(root, files);
for (const problem of problems)
  console.error(`doc-links: ${problem.at}: (${problem.target}) ${problem.reason}`);
if (problems.length > 0) {
  console.error(`\ndoc-links: ${problems.length} broken link${problems.length === 1 ? "" : "s"}.`);
  process.exit(1);
}
console.log(`doc-links: every relative link of ${files.length} Markdown pages resolves`);
