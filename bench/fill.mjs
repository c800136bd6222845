// `node bench/fill.mjs`: the bench's trace phase alone. Builds the proxy and the sandbox as `npm run
// bench` does, fills one run with 10,000 proxied reads at c=64 and prints the calls/s and workerd's
// CPU per call of each thousand (a call must cost the same whatever the size of its run), then
// times the trace's first page. Nothing leaves 127.0.0.1.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { offlineEnv } from "../scripts/offline-env.mjs";
import { buildBundles } from "./build.mjs";
import { fillRates, tracePhase } from "./phases.mjs";
import { onStack } from "./stack.mjs";
import { workloadFor } from "./workload.mjs";

Object.assign(process.env, offlineEnv);

const outdir = mkdtempSync(join(tmpdir(), "edge-tool-proxy-fill-"));
console.log("fill: building the proxy and the sandbox ...");
const bundles = buildBundles(outdir);
const figures = await onStack(bundles, {}, async (stack) =>
  tracePhase(await workloadFor(stack), { samples: 20, pid: stack.workerdPid }),
);
console.log(fillRates(figures));
console.log(`fill: trace first page p50 ${figures.p50_ms} ms, ${figures.entries_returned} entries`);
