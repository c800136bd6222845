// `npm run bench`: what the proxy costs, measured as production pays it. Wrangler's dry run builds
// the proxy and its sandbox upstream as a deploy of the sandbox environment would ship them; workerd
// serves those bundles through the Miniflare API, in one process, with a hello Worker as the floor.
// No dev server sits in between (`wrangler dev` relays every service-binding subrequest through its
// inspector, a cost production never pays). Nothing leaves 127.0.0.1.
//
//   npm run bench [-- --no-trace] [-- --tmpfs]   BENCH_SAMPLES (default 400), BENCH_SECONDS (default 3)
//   npm run bench -- --abuse [...]    the abuse load test (scripts/bench-abuse.mjs), options passed on
//
// Durable Objects keep their SQLite files where Miniflare puts them, a folder of the OS's temp dir,
// and every commit waits for that disk. --tmpfs puts them in /dev/shm instead: the difference is
// what the local disk adds, which Cloudflare's storage does not pay as such (it pays replication).
//
// Prints tables and writes reports/bench.json: c=1 latency, throughput at c=16 and c=64, workerd's
// CPU per request, startup CPU, cold start, bundle size, the trace's first page, and the ratios the
// docs/performance.md holds the proxy to, each with its goal.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { root } from "../scripts/local-stack.mjs";
import { offlineEnv } from "../scripts/offline-env.mjs";
import { runAbuse } from "./abuse.mjs";
import { buildBundles } from "./build.mjs";
import { resent } from "./http.mjs";
import { fillRates, latencyPhase, replayPhase, throughputPhase, tracePhase } from "./phases.mjs";
import { printReport, ratiosOf, writeReport } from "./report.mjs";
import { onStack } from "./stack.mjs";
import { bundleSizes, checkStartup, coldStarts } from "./startup.mjs";
import { workloadFor } from "./workload.mjs";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 400);
const WARMUP = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const STARTUP_RUNS = 3;
for (const [name, value] of Object.entries({ BENCH_SAMPLES: SAMPLES, BENCH_SECONDS: SECONDS })) {
  if (!(value > 0)) {
    console.error(`bench: ${name} must be a positive number`);
    process.exit(2);
  }
}
const TRACE_SAMPLES = 50;

// The wrangler API runs in this process too: no metrics, no error reports, no cf fetch.
Object.assign(process.env, offlineEnv);

const step = (message) => console.log(`bench: ${message}`);

function versionOf(pkg, from = root) {
  const manifest = createRequire(join(from, "package.json")).resolve(`${pkg}/package.json`);
  return JSON.parse(readFileSync(manifest, "utf8")).version;
}

async function startupFigures(bundles, outdir) {
  step(`wrangler check startup on the built proxy (${STARTUP_RUNS} runs) ...`);
  let checkStartupResult;
  try {
    checkStartupResult = checkStartup(bundles.uploadForm, outdir, STARTUP_RUNS);
  } catch (error) {
    checkStartupResult = { cpu_ms: null, error: error instanceof Error ? error.message : String(error) };
    step(
      `wrangler check startup failed; the cold start below still measures the start:\n${checkStartupResult.error}`,
    );
  }
  step(`cold starts: the proxy alone, its bindings around hello, hello alone (${STARTUP_RUNS} each) ...`);
  return { check_startup: checkStartupResult, cold_start: await coldStarts(bundles, STARTUP_RUNS) };
}

async function measure(bundles, outdir, { trace, persistRoot }) {
  const startup = await startupFigures(bundles, outdir);
  step(
    `starting the proxy, the sandbox and hello in one workerd, storage in ${persistRoot ?? "the temp dir"} ...`,
  );
  return onStack(bundles, { persistRoot }, async (stack) => {
    const workload = await workloadFor(stack);
    const pid = stack.workerdPid;
    step(`latency at c=1 (${SAMPLES} samples of each, ${WARMUP} warmup, interleaved) ...`);
    const latency = await latencyPhase(workload, { warmup: WARMUP, samples: SAMPLES });
    const throughputs = {};
    for (const concurrency of [16, 64]) {
      step(`throughput at c=${concurrency} (${SECONDS} s each) ...`);
      throughputs[`c${concurrency}`] = await throughputPhase(workload, {
        concurrency,
        seconds: SECONDS,
        pid,
      });
    }
    throughputs.c16.replay_one_run = await replayPhase(workload, { concurrency: 16, seconds: SECONDS, pid });
    let traceFigures = null;
    if (trace) {
      step(`filling a run with 10,000 calls, then its trace's first page (${TRACE_SAMPLES} samples) ...`);
      traceFigures = await tracePhase(workload, { samples: TRACE_SAMPLES, pid });
      step(fillRates(traceFigures));
    }
    const cpu = Object.fromEntries(
      Object.entries(throughputs.c16).map(([name, batch]) => [name, batch.cpu_ms_per_request]),
    );
    cpu.added_by_proxy = cpu.proxied_read_one_run - cpu.direct_read;
    return {
      latency_ms: latency,
      throughput: throughputs,
      cpu_ms_per_request: cpu,
      startup,
      bundle: bundleSizes(bundles),
      trace: traceFigures,
    };
  });
}

async function main() {
  const args = process.argv.slice(2);
  const outdir = mkdtempSync(join(tmpdir(), "edge-tool-proxy-bench-"));
  // Everything here shares the machine's cores with whatever else runs: the load says how much did.
  const loadBefore = loadavg();
  try {
    step("building the proxy and the sandbox with wrangler's dry run (--env sandbox --minify) ...");
    const bundles = buildBundles(outdir);
    if (args.includes("--abuse"))
      return await runAbuse(
        bundles,
        args.filter((arg) => arg !== "--abuse"),
      );
    const persistRoot = args.includes("--tmpfs") ? mkdtempSync("/dev/shm/edge-tool-proxy-bench-") : undefined;
    let figures;
    try {
      figures = await measure(bundles, outdir, { trace: !args.includes("--no-trace"), persistRoot });
    } finally {
      if (persistRoot) rmSync(persistRoot, { recursive: true, force: true });
    }
    const report = {
      measured_at: new Date().toISOString(),
      node: process.version,
      miniflare: versionOf("miniflare"),
      workerd: versionOf("workerd", join(root, "node_modules", "miniflare")),
      wrangler: versionOf("wrangler"),
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model ?? null,
        load_average_1m: { before: loadBefore[0], after: loadavg()[0] },
      },
      samples: SAMPLES,
      warmup: WARMUP,
      throughput_seconds: SECONDS,
      storage: persistRoot ? "tmpfs (/dev/shm)" : "disk (the OS's temp dir)",
      client_resent_requests: resent.count,
      figures,
      ratios: ratiosOf(figures),
    };
    printReport(report);
    step(`wrote ${writeReport(report)}`);
    return 0;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

try {
  process.exit(await main());
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
