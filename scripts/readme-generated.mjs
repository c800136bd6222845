// `npm run readme`: rewrites the generated regions of README.md (and of any docs/ page holding one)
// from the project itself, so the text cannot drift from what the proxy does.
//
//   node scripts/readme-generated.mjs [--check] [--only token-table|walkthrough|performance|evaluation] [--url <proxy>]
//
//   token-table   the token cost of each tool-spec format (scripts/readme/token-table.ts), computed
//                 in process from src/specs and the catalog; no server
//   walkthrough   the walk-through's sample answers (scripts/readme/walkthrough.ts), from a running
//                 proxy: the one at --url (its sandbox should be fresh), else one started here on
//                 loopback with a fresh state (scripts/local-proxy.ts)
//   performance   the Performance section's figures and goals (scripts/readme/performance.ts), from
//                 reports/bench.json of `npm run bench` on this commit; only with --only (the figures
//                 are one machine's, so no check compares them)
//   evaluation    docs/evaluation.md's figures (scripts/readme/evaluation.ts), from reports/eval.json
//                 of `npm run eval` on this commit, every case; only with --only. With --check it
//                 compares no figures (they are one machine's run): it refuses a region measured on
//                 other cases than the eval's own now (`npm run lint` runs that check)
//   --check       writes nothing; exits 1 naming each region that differs, with the diff
//                 (`npm run lint` checks the token table; test/e2e/readme-generated.test.ts the walk-through)
import { tsImport } from "tsx/esm/api";
import { root } from "./local-stack.mjs";

const GROUPS = {
  "token-table": ["token-table"],
  walkthrough: ["walkthrough-lookup-order", "walkthrough-validation-error"],
  performance: ["performance"],
  evaluation: ["evaluation"],
};
/** Groups run when no --only names one: performance and evaluation are rewritten only when asked for. */
const DEFAULT_GROUPS = ["token-table", "walkthrough"];

function options(args) {
  const parsed = { check: false, only: DEFAULT_GROUPS, url: undefined };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--check") parsed.check = true;
    else if (arg === "--only" && args[i + 1] in GROUPS) parsed.only = [args[++i]];
    else if (arg === "--url" && args[i + 1]) parsed.url = args[++i];
    else {
      console.error(
        `readme: unknown argument ${JSON.stringify(arg)}${arg === "--only" ? ` (allowed: ${Object.keys(GROUPS).join(", ")})` : ""}`,
      );
      console.error(
        "usage: node scripts/readme-generated.mjs [--check] [--only token-table|walkthrough|performance|evaluation] [--url <proxy>]",
      );
      process.exit(2);
    }
  }
  return parsed;
}

async function generate(group, url) {
  if (group === "evaluation") {
    const { evaluationRegion } = await tsImport("./readme/evaluation.ts", import.meta.url);
    try {
      return new Map([["evaluation", evaluationRegion(root)]]);
    } catch (error) {
      console.error(`readme: ${error instanceof Error ? error.message : error}`);
      process.exit(1);
    }
  }
  if (group === "performance") {
    const { performanceRegion } = await tsImport("./readme/performance.ts", import.meta.url);
    try {
      return new Map([["performance", performanceRegion(root)]]);
    } catch (error) {
      console.error(`readme: ${error instanceof Error ? error.message : error}`);
      process.exit(1);
    }
  }
  if (group === "token-table") {
    const { tokenTable } = await tsImport("./readme/token-table.ts", import.meta.url);
    return new Map([["token-table", tokenTable()]]);
  }
  const { walkthroughRegions } = await tsImport("./readme/walkthrough.ts", import.meta.url);
  if (url) return walkthroughRegions(url);
  const { startProxy } = await tsImport("./local-proxy.ts", import.meta.url);
  console.log("readme: starting the proxy and its sandbox (wrangler dev) for the walk-through ...");
  const proxy = await startProxy();
  try {
    return await walkthroughRegions(proxy.url);
  } finally {
    proxy.stop();
  }
}

const { check, only, url } = options(process.argv.slice(2));
const { findRegions, lineDiff, writeRegion } = await tsImport("./readme/regions.ts", import.meta.url);
const regions = findRegions(root);
let stale = 0;
for (const group of only) {
  if (check && group === "evaluation") {
    // The figures are one machine's run: the check asks only whether they are of the cases as they are.
    const { evaluationStale } = await tsImport("./readme/evaluation.ts", import.meta.url);
    const region = regions.get("evaluation");
    const why = region ? evaluationStale(region.body) : "there is no such region";
    if (why) {
      console.error(
        `readme: ${region?.file ?? "docs/evaluation.md"}, region "evaluation" is out of date: ${why}`,
      );
      stale++;
    }
    continue;
  }
  const generated = await generate(group, url);
  for (const name of GROUPS[group]) {
    const region = regions.get(name);
    const body = generated.get(name);
    if (!region) {
      console.error(
        `readme: no generated region "${name}" (<!-- generated:${name} --> … <!-- /generated -->)`,
      );
      stale++;
      continue;
    }
    if (region.body === body) continue;
    if (check) {
      console.error(`readme: ${region.file}, region "${name}" is not what the project generates:`);
      console.error(lineDiff(region.body, body));
      stale++;
    } else {
      writeRegion(root, region.file, name, body);
      console.log(`readme: rewrote ${region.file}, region "${name}"`);
    }
  }
}
if (stale > 0) {
  console.error(`\nreadme: ${stale} region${stale === 1 ? "" : "s"} out of date; run \`npm run readme\`.`);
  process.exit(1);
}
