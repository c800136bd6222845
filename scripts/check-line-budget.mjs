// `npm run lint`: the Durable Object that keeps a run stays a driver. `RunLedger` holds its
// construction, load, schema, commit and alarm entry and one-line RPC methods; every workflow it
// drives is in src/workflow/, behind ports. A file past its budget has grown a workflow back.
// Exits 1 naming each file over its budget.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "./local-stack.mjs";

const BUDGETS = { "src/ledger/run-ledger.ts": 350 };

const over = Object.entries(BUDGETS).flatMap(([file, budget]) => {
  const lines = readFileSync(join(root, file), "utf8").split("\n").length - 1;
  return lines > budget ? [`line-budget: ${file} has ${lines} lines, over its budget of ${budget}`] : [];
});
for (const problem of over) console.error(problem);
if (over.length > 0) process.exit(1);
console.log(`line-budget: ${Object.keys(BUDGETS).length} file within its budget`);
