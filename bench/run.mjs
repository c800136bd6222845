// `npm run bench`: what the proxy costs, measured as production pays it. Wrangler's dry run builds
// the proxy and its sandbox upstream as a deploy of the sandbox environment would ship them; workerd
// serves those bundles through the Miniflare API, in one process, beside a hello Worker (the
// runtime's floor) and a floor worker (a bare Durable Object doing one SQLite INSERT per request:
// one object hop and one commit). No dev server sits in between (`wrangler dev` relays every
// service-binding subrequest through its inspector, a cost production never pays). Nothing leaves
// 127.0.0.1.
//
//   npm run bench [-- --no-trace] [-- --tmpfs] [-- --proxy-root <tree>] [-- --profile-only]
//     BENCH_SAMPLES (c=1 rounds, default 300), BENCH_SECONDS (one throughput round, default 1),
//     BENCH_ROUNDS (throughput rounds of each batch, default 5), BENCH_PROFILE_CALLS (calls of each
//     profiled stage, default 300)
//   npm run bench -- --abuse [...]    the abuse load test (scripts/bench-abuse.mjs), options passed on
//
// --proxy-root builds the proxy and the sandbox from another checkout of the project (a worktree of
// an older commit, with its node_modules), measured by this bench: before and after, same command.
// Durable Objects keep their SQLite files where Miniflare puts them, a folder of the OS's temp dir,
// and every commit waits for that disk. --tmpfs puts them in /dev/shm instead.
//
// Prints tables and writes reports/bench.json, only when every phase succeeded (a failed run
// removes the previous report and exits 1): c=1 latency with paired differences, throughput batches
// interleaved round-robin, workerd's CPU per request, run open, first write, MCP session call, the
// idle run's next call, startup CPU, cold start, bundle size, the trace's first page, and each goal
// with whether it is met; last, on a stack of its own with workerd's inspector open (so no other
// figure is measured with it), a CPU profile of the read, the first write and the replay, with
// each stage's ten heaviest functions. --profile-only builds, profiles and prints that alone.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { root } from "../scripts/local-stack.mjs";
import { offlineEnv } from "../scripts/offline-env.mjs";
import { runAbuse } from "./abuse.mjs";
import { buildBundles } from "./build.mjs";
import { evaluateGoals } from "./goals.mjs";
import { resent } from "./http.mjs";
import {
  cpuPhase,
  firstWritePhase,
  idleRunPhase,
  latencyPhase,
  MANY_RUNS,
  runOpenPhase,
  throughputPhase,
  tracePhase,
} from "./phases.mjs";
import { profilePhase } from "./profile.mjs";
import { printProfile, printReport, removeReport, writeReport } from "./report.mjs";
import { onStack } from "./stack.mjs";
import { bundleSizes, checkStartups, coldStarts } from "./startup.mjs";
import { workloadFor } from "./workload.mjs";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const WARMUP = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const STARTUP_RUNS = 5;
const CONCURRENCY = 64;
for (const [name, value] of Object.entries({
  BENCH_SAMPLES: SAMPLES,
  BENCH_SECONDS: SECONDS,
  BENCH_ROUNDS: ROUNDS,
})) {
  if (!(value > 0)) {
    console.error(`bench: ${name} must be a positive number`);
    process.exit(2);
  }
}
const TRACE_SAMPLES = 50;
const PROFILE_CALLS = Number(process.env.BENCH_PROFILE_CALLS ?? 300);
if (!(PROFILE_CALLS > 0)) {
  console.error("bench: BENCH_PROFILE_CALLS must be a positive number");
  process.exit(2);
}

// The wrangler API runs in this process too: no metrics, no error reports, no cf fetch.
Object.assign(process.env, offlineEnv);

const step = (message) => console.log(`bench: ${message}`);

function versionOf(pkg, from = root) {
  const manifest = createRequire(join(from, "package.json")).resolve(`${pkg}/package.json`);
  return JSON.parse(readFileSync(manifest, "utf8")).version;
}

async function startupFigures(bundles, outdir) {
  // The goal is held by what production starts (its split build's main module and static imports);
  // the sandbox build the bench serves, one module with everything, is measured beside it.
  const forms = { production: bundles.productionForm, sandbox: bundles.uploadForm };
  step(
    `wrangler check startup on the production and sandbox builds of the proxy, in turn (${STARTUP_RUNS} runs each) ...`,
  );
  const profiles = join(outdir, "startup");
  mkdirSync(profiles, { recursive: true });
  const checked = checkStartups(forms, profiles, STARTUP_RUNS);
  for (const [name, result] of Object.entries(checked)) {
    if (result.error) {
      step(
        `wrangler check startup failed on the ${name} build; the cold start below still measures the start:\n${result.error}`,
      );
    }
  }
  step(
    `cold starts: the production build and the sandbox build, each build's bindings around hello, hello alone (${STARTUP_RUNS} each) ...`,
  );
  return {
    check_startup: checked.production,
    check_startup_sandbox: checked.sandbox,
    cold_start: await coldStarts(bundles, STARTUP_RUNS),
  };
}

async function measure(bundles, outdir, { trace, persistRoot }) {
  const startup = await startupFigures(bundles, outdir);
  step(
    `starting the proxy, the sandbox, hello and the floor worker in one workerd, storage in ${persistRoot ?? "the temp dir"} ...`,
  );
  return onStack(bundles, { persistRoot }, async (stack) => {
    const workload = await workloadFor(stack);
    const pid = () => stack.workerdPid;
    step(`latency at c=1 (${SAMPLES} rounds, ${WARMUP} warmup; direct and proxied paired per round) ...`);
    const latency = await latencyPhase(workload, { warmup: WARMUP, samples: SAMPLES });
    step(`run open: 100 one after another, then ${MANY_RUNS} at c=16 (and as many new floor objects) ...`);
    const runOpen = await runOpenPhase(workload, { samples: 100, batch: MANY_RUNS, concurrency: 16, pid });
    step("workerd CPU per request at c=1: 3 rounds of 300 of each series in turn ...");
    const cpu = await cpuPhase(workload, { rounds: 3, count: 300, pid });
    step("first write: workerd CPU over 100 writes one after another ...");
    const firstWrite = await firstWritePhase(workload, { count: 100, pid });
    step(`throughput at c=${CONCURRENCY}: ${ROUNDS} rounds of ${SECONDS} s of each batch, round-robin ...`);
    const throughput = await throughputPhase(workload, {
      concurrency: CONCURRENCY,
      seconds: SECONDS,
      rounds: ROUNDS,
      pid,
      manyRuns: runOpen.runs,
      manyFloorObjects: runOpen.floorObjects,
    });
    let traceFigures = null;
    if (trace) {
      step(
        `filling a run with 10,000 calls at c=16, then its trace's first page (${TRACE_SAMPLES} samples) ...`,
      );
      traceFigures = await tracePhase(workload, { samples: TRACE_SAMPLES });
    }
    step("idle runs: 35 runs called once, left 13 s without a request (evicted), then their next call ...");
    const idleRun = await idleRunPhase(workload, stack, { count: 35, warmup: 5, leave: "eviction" });
    step(
      "idle runs after a restart: 35 runs called once, workerd restarted on the same storage, then their next call ...",
    );
    const idleRunAfterRestart = await idleRunPhase(workload, stack, {
      count: 35,
      warmup: 5,
      leave: "restart",
    });
    return {
      ...latency,
      cpu_c1: cpu,
      run_open: runOpen.figures,
      first_write: firstWrite,
      throughput,
      idle_run: idleRun,
      idle_run_after_restart: idleRunAfterRestart,
      startup,
      bundle: bundleSizes(bundles),
      trace: traceFigures,
    };
  });
}

/** The proxy's CPU profile per stage, on a stack of its own with workerd's inspector open. */
function profileFigures(bundles, persistRoot) {
  step(
    `CPU profile of the proxy: ${PROFILE_CALLS} reads, first writes and replays, each stage one call after another ...`,
  );
  return onStack(bundles, { persistRoot, inspector: true }, async (stack) =>
    profilePhase(await workloadFor(stack), {
      inspectorUrl: stack.inspectorUrl,
      workerName: stack.proxyName,
      bundlePath: bundles.proxy,
      root: bundles.root,
      count: PROFILE_CALLS,
    }),
  );
}

/** The commit of the tree at `from`, and whether it has uncommitted changes to tracked files. */
function commitOf(from) {
  const git = (...args) =>
    execFileSync("git", args, { cwd: from, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  try {
    return {
      commit: git("rev-parse", "HEAD"),
      dirty: git("status", "--porcelain", "--untracked-files=no") !== "",
    };
  } catch {
    // An exported tree (git archive) has no history: its figures are named by the tree alone.
    return { commit: "unknown", dirty: false };
  }
}

/** The value following `flag` in `args`, or undefined; exits when the flag has no value. */
function flagValue(args, flag) {
  const at = args.indexOf(flag);
  if (at === -1) return undefined;
  const value = args[at + 1];
  if (!value || value.startsWith("--")) {
    console.error(`bench: ${flag} needs a value`);
    process.exit(2);
  }
  return value;
}

async function main() {
  const args = process.argv.slice(2);
  const proxyRoot = flagValue(args, "--proxy-root");
  const from = proxyRoot ? resolve(proxyRoot) : root;
  // The commit built, read before the build: HEAD may move while the bench runs.
  const built = commitOf(from);
  // A report is this run's or none: the last one goes before anything is measured.
  if (!args.includes("--abuse")) removeReport();
  const outdir = mkdtempSync(join(tmpdir(), "edge-tool-proxy-bench-"));
  // Everything here shares the machine's cores with whatever else runs: the load says how much did.
  const loadBefore = loadavg();
  try {
    step(
      `building the proxy and the sandbox of ${from} with wrangler's dry run (--env sandbox --minify) ...`,
    );
    const bundles = buildBundles(outdir, from);
    if (args.includes("--abuse"))
      return await runAbuse(
        bundles,
        args.filter((arg) => arg !== "--abuse"),
      );
    const persistRoot = args.includes("--tmpfs") ? mkdtempSync("/dev/shm/edge-tool-proxy-bench-") : undefined;
    let figures;
    try {
      if (args.includes("--profile-only")) {
        printProfile(await profileFigures(bundles, persistRoot));
        return 0;
      }
      figures = await measure(bundles, outdir, { trace: !args.includes("--no-trace"), persistRoot });
      figures.profile = await profileFigures(bundles, persistRoot);
    } finally {
      if (persistRoot) rmSync(persistRoot, { recursive: true, force: true });
    }
    const report = {
      ...built,
      tree: from,
      command: [
        `BENCH_SAMPLES=${SAMPLES} BENCH_SECONDS=${SECONDS} BENCH_ROUNDS=${ROUNDS} npm run bench`,
        ...(args.length > 0 ? ["--", ...args] : []),
      ].join(" "),
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
      throughput: { concurrency: CONCURRENCY, round_seconds: SECONDS, rounds: ROUNDS },
      storage: persistRoot ? "tmpfs (/dev/shm)" : "disk (the OS's temp dir)",
      client_resent_requests: resent.count,
      figures,
    };
    report.goals = evaluateGoals(figures);
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
  console.error(`\nbench: FAILED, no report written: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
