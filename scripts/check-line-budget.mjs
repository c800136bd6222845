// `npm run lint`: no hand-written module of src/ grows past what one reader holds in mind, and the
// Durable Object that keeps a run stays a driver: `RunLedger` holds its construction, load, schema,
// commit and alarm entry and one-line RPC methods, every workflow it drives being in src/workflow/
// behind ports. A file past its budget has taken on a second concern. Generated files (src/generated/,
// written by `npm run tools -- compile`) are exempt: nobody reads them to change them.
// Exits 1 naming each file over its budget.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { root } from "./local-stack.mjs";

/** Lines any hand-written source file of src/ may have. */
const FILE_BUDGET = 500;
/** Tighter budgets where a file is meant to stay a thin shell. */
const BUDGETS = new Map([["src/ledger/run-ledger.ts", 350]]);
const GENERATED = join(root, "src", "generated");

function* sources(folder) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      if (path !== GENERATED) yield* sources(path);
    } else if (/\.tsx?$/.test(entry.name)) yield path;
  }
}

const over = [];
for (const path of sources(join(root, "src"))) {
  const name = relative(root, path);
  const budget = BUDGETS.get(name) ?? FILE_BUDGET;
  const lines = readFileSync(path, "utf8").split("\n").length - 1;
  if (lines > budget) over.push(`line-budget: ${name} has ${lines} lines, over its budget of ${budget}`);
}
for (const problem of over) console.error(problem);
if (over.length > 0) process.exit(1);
console.log(
  `line-budget: every hand-written file of src/ within ${FILE_BUDGET} lines, run-ledger.ts within 350`,
);
