// `npm run fleet`: a fleet of runs of one tenant acting at once, on the production build. Wrangler's
// dry run builds the proxy and its sandbox upstream, workerd serves them through the Miniflare API
// (as `npm run bench` does, fresh storage each time), and 200 hooli runs each send one
// auto-approved 1000-cent refund at the same moment: 20 of them on order H0001, the others on an
// order of their own. The tenant's 50000-cent daily cap allows 50 of them, and an order's refund
// only one. Then the sandbox's own records are read back and the answers checked: at most 50
// refunds, at most one on H0001, a success for each and every other answer an approval_required
// naming the cap or the earlier effect. Exits 1 when a check fails. Nothing leaves 127.0.0.1.
//
//   npm run fleet [-- --tmpfs]      npm run -s fleet -- --json (JSON alone on stdout)
//
// --json prints the result as JSON alone (progress goes to stderr); --tmpfs keeps Durable Object
// storage in /dev/shm rather than the OS's temp dir.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { offlineEnv } from "../scripts/offline-env.mjs";
import { buildBundles } from "./build.mjs";
import {
  AMOUNT_CENTS,
  burst,
  claimTimes,
  DAILY_CAP_CENTS,
  openRuns,
  ordersOf,
  sandboxRefunds,
} from "./fleet-burst.mjs";
import { checksOf, printFleet, tally } from "./fleet-report.mjs";
import { closeConnections, resent } from "./http.mjs";
import { onStack, sandboxWorker } from "./stack.mjs";
import { summarise } from "./stats.mjs";

const RUNS = 200;
const SHARED = 20;

// The wrangler API runs in this process too: no metrics, no error reports, no cf fetch.
Object.assign(process.env, offlineEnv);

const asJson = process.argv.includes("--json");
const step = (message) => (asJson ? console.error : console.log)(`fleet: ${message}`);

async function measure(bundles, persistRoot) {
  step(`starting the proxy and the sandbox in one workerd, storage in ${persistRoot} ...`);
  return onStack(bundles, { persistRoot }, async (stack) => {
    const adminToken = sandboxWorker(bundles).bindings.SANDBOX_ADMIN_TOKEN;
    const before = await sandboxRefunds(stack.urls.sandbox, adminToken);
    step(`opening ${RUNS} hooli runs ...`);
    const runs = await openRuns(stack.urls.proxy, RUNS);
    await freshConnections();
    const orders = ordersOf({ runs: RUNS, shared: SHARED });
    step(`${RUNS} refunds of ${AMOUNT_CENTS} cents at once, ${SHARED} of them on ${orders[0]} ...`);
    const { answers, wall_ms } = await burst(stack.urls.proxy, runs, orders);
    await freshConnections();
    step("reading back every run's trace and the sandbox's refunds ...");
    const claims = await claimTimes(stack.urls.proxy, runs);
    const refunds = await sandboxRefunds(stack.urls.sandbox, adminToken);
    const outcomes = tally(answers, orders[0]);
    return {
      runs: RUNS,
      shared_order: orders[0],
      shared_order_runs: SHARED,
      amount_cents: AMOUNT_CENTS,
      daily_cap_cents: DAILY_CAP_CENTS,
      outcomes,
      sandbox: {
        refunds_before: before.length,
        refunds: refunds.length,
        refunds_on_shared_order: refunds.filter((refund) => refund.order_id === orders[0]).length,
        refunded_cents: refunds.reduce((sum, refund) => sum + refund.amount_cents, 0),
        orders_refunded_twice: duplicatesOf(refunds.map((refund) => refund.order_id)),
      },
      burst: {
        wall_ms,
        effects_per_s: (outcomes.success * 1000) / wall_ms,
        calls_per_s: (answers.length * 1000) / wall_ms,
      },
      latency_ms: summarise(answers.map((answer) => answer.latency_ms)),
      ...claims,
      others: answers.filter((answer) => answer.kind === "other"),
    };
  });
}

/**
 * Starts the next phase on new connections. workerd closes a connection it deems idle, and one that
 * waited seconds for a burst's answer can be closed just as the next phase reuses it; a request reset
 * that way is sent once more, possibly on another such connection, and then fails. The pause lets
 * the destroyed sockets leave the agent's pool before anything asks it for one.
 */
async function freshConnections() {
  closeConnections();
  await new Promise((resolve) => setTimeout(resolve, 100));
}

function duplicatesOf(values) {
  const seen = new Set();
  const twice = new Set();
  for (const value of values) (seen.has(value) ? twice : seen).add(value);
  return [...twice];
}

async function main() {
  const outdir = mkdtempSync(join(tmpdir(), "edge-tool-proxy-fleet-"));
  const persistRoot = mkdtempSync(
    process.argv.includes("--tmpfs")
      ? "/dev/shm/edge-tool-proxy-fleet-"
      : join(tmpdir(), "edge-tool-proxy-fleet-do-"),
  );
  const loadBefore = loadavg()[0];
  try {
    step("building the proxy and the sandbox with wrangler's dry run (--env sandbox --minify) ...");
    const figures = await measure(buildBundles(outdir), persistRoot);
    const checks = checksOf(figures);
    const report = {
      measured_at: new Date().toISOString(),
      node: process.version,
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model ?? null,
        load_average_1m: { before: loadBefore, after: loadavg()[0] },
      },
      storage: process.argv.includes("--tmpfs") ? "tmpfs (/dev/shm)" : "disk (the OS's temp dir)",
      client_resent_requests: resent.count,
      ...figures,
      checks,
      pass: checks.every((check) => check.pass),
    };
    if (asJson) console.log(JSON.stringify(report, null, 2));
    else printFleet(report);
    return report.pass ? 0 : 1;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
    rmSync(persistRoot, { recursive: true, force: true });
  }
}

try {
  process.exit(await main());
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
