// The folder graph of src/ in docs/layout.md, generated from dependency-cruiser's own cruise (value
// imports), never drawn by hand. The same cruise holds the no-folder-cycles rule
// (.dependency-cruiser-cycles.cjs): one parse of src/ serves both, instead of one each.
//   node scripts/layout-graph.mjs          rewrites the block between the page's graph markers
//   node scripts/layout-graph.mjs --check  fails when the page's block is not what the code says
// Either way it fails, naming the loop, when two folders import each other.
// Edges are transitively reduced (a → c is left out when a → b → c exists) so the picture stays
// readable; the table beside it lists every folder each folder imports.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cruise } from "dependency-cruiser";

const require = createRequire(import.meta.url);
const config = require("../.dependency-cruiser-cycles.cjs");
const PAGE = new URL("../docs/layout.md", import.meta.url);
const BEGIN = "<!-- folder-graph:begin (npm run graph) -->";
const END = "<!-- folder-graph:end -->";

/** `src/ledger/run-ledger.ts` → `ledger/`; files at the root of src/ stand for themselves. */
function unitOf(path) {
  const parts = path.replace(/^src\//, "").split("/");
  return parts.length > 1 ? `${parts[0]}/` : parts[0];
}

const result = await cruise(["src"], {
  ...config.options,
  ruleSet: { forbidden: config.forbidden },
  includeOnly: "^src/",
  validate: true,
});
const cycles = result.output.summary.violations.filter((violation) => violation.rule.severity === "error");
if (cycles.length > 0) {
  for (const violation of cycles) {
    const loop = (violation.cycle ?? []).map((step) => step.name ?? step).join(" → ");
    console.error(`${violation.rule.name}: ${violation.from} → ${violation.to}${loop ? ` (${loop})` : ""}`);
  }
  const rule = config.forbidden.find((each) => each.name === cycles[0].rule.name);
  console.error(`layout-graph: ${cycles.length} folder cycle(s). ${rule?.comment ?? ""}`);
  process.exit(1);
}
const edges = new Map();
for (const module of result.output.modules) {
  const from = unitOf(module.source);
  if (!edges.has(from)) edges.set(from, new Set());
  for (const dependency of module.dependencies) {
    if (!dependency.resolved.startsWith("src/")) continue;
    const to = unitOf(dependency.resolved);
    if (to !== from && !to.endsWith(".d.ts")) edges.get(from).add(to);
  }
}
const units = [...edges.keys()].filter((unit) => unit !== "env.ts").sort();

function reaches(from, to, skipDirect) {
  const seen = new Set();
  const stack = [...(edges.get(from) ?? [])].filter((next) => !(skipDirect && next === to));
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === to) return true;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(edges.get(next) ?? []));
  }
  return false;
}

// Written by `npm run tools -- compile`, never by hand (scripts/tools.mjs OUTPUTS): drawn dashed,
// so a reader sees which arrows point at generated code.
const GENERATED = new Set(["generated/"]);

const id = (unit) => unit.replace(/[/.]/g, "_");
const lines = ["```mermaid", "flowchart TD"];
for (const unit of units) lines.push(`  ${id(unit)}["${unit}"]`);
const generated = units.filter((unit) => GENERATED.has(unit));
if (generated.length > 0) {
  lines.push("  classDef generated stroke-dasharray: 5 5");
  lines.push(`  class ${generated.map(id).join(",")} generated`);
}
for (const from of units) {
  for (const to of [...(edges.get(from) ?? [])].sort()) {
    if (to === "env.ts" || reaches(from, to, true)) continue;
    lines.push(`  ${id(from)} --> ${id(to)}`);
  }
}
lines.push("```", "", "| folder | imports (by value) |", "| --- | --- |");
for (const unit of units) {
  const to = [...(edges.get(unit) ?? [])].filter((other) => other !== "env.ts").sort();
  lines.push(
    `| \`${unit}\`${GENERATED.has(unit) ? " (generated)" : ""} | ${to.length > 0 ? to.map((other) => `\`${other}\``).join(" ") : "nothing of ours"} |`,
  );
}
const block = `${BEGIN}\n${lines.join("\n")}\n${END}`;

const page = readFileSync(PAGE, "utf8");
const start = page.indexOf(BEGIN);
const end = page.indexOf(END);
if (start < 0 || end < 0) throw new Error(`docs/layout.md has no ${BEGIN} … ${END} block`);
const current = page.slice(start, end + END.length);
if (process.argv.includes("--check")) {
  if (current !== block) {
    console.error("layout-graph: docs/layout.md's folder graph is stale; run `npm run graph`.");
    process.exit(1);
  }
  console.log("layout-graph: docs/layout.md's folder graph matches the code");
} else {
  writeFileSync(PAGE, page.replace(current, block));
  console.log(`layout-graph: wrote ${units.length} folders to docs/layout.md`);
}
