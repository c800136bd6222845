// `npm test`: every check and every suite, run in lanes side by side instead of one after another.
//
//   node scripts/test-all.mjs [--serial]
//
// Why lanes: the workerd suite keeps both cores busy, while the browser, end-to-end and evaluation
// suites spend most of their time waiting on a started proxy, a browser or a poll. Run one after
// another they added up to about seven minutes on a 2-core machine; side by side they fill the
// waits. Each step's output is held and printed whole, in the order the steps are declared, so the
// log reads as if they had run one after another; a summary of every step's time ends it. Every
// step runs even when another failed (a lane does not wait on a lane it does not need), so one run
// reports every failure; the exit code is 1 when any step failed. `--serial` runs them one at a
// time (to time a step alone, or on a machine with one core).
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import { root } from "./local-stack.mjs";

/**
 * The steps, in the order their output is printed. `lane` steps run one after another; lanes run
 * side by side. `after` names steps of other lanes this one needs finished (the sandbox's bundle).
 * Lanes are balanced by measurement: `lint` then the workerd suite fill both cores; the browser
 * and end-to-end suites, mostly waiting, go beside it.
 */
const STEPS = [
  { name: "build:sandbox", lane: "suites", command: "npm run -s build:sandbox" },
  { name: "typecheck", lane: "checks", command: "npm run -s typecheck" },
  { name: "tools check", lane: "suites", command: "npm run -s tools -- check" },
  { name: "lint", lane: "checks", command: "npm run -s lint" },
  { name: "vitest", lane: "checks", command: "npx vitest run", after: ["build:sandbox"] },
  { name: "test:browser", lane: "suites", command: "npm run -s test:browser" },
  { name: "test:e2e", lane: "newcomer", command: "npm run -s test:e2e", after: ["build:sandbox"] },
  { name: "test:bundle", lane: "suites", command: "npm run -s test:bundle" },
  { name: "check:openapi", lane: "suites", command: "npm run -s check:openapi" },
  { name: "eval", lane: "newcomer", command: "npm run -s eval -- --ci" },
];

const { values } = parseArgs({ options: { serial: { type: "boolean", default: false } } });

/** Runs one step with its output held; resolves with what it printed, its exit code and its time. */
function run(step) {
  return new Promise((resolve) => {
    const started = performance.now();
    const chunks = [];
    const child = spawn("bash", ["-c", step.command], {
      cwd: root,
      env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (chunk) => chunks.push(chunk));
    child.stderr.on("data", (chunk) => chunks.push(chunk));
    child.on("close", (code, signal) =>
      resolve({
        output: Buffer.concat(chunks).toString("utf8"),
        code: code ?? (signal ? 128 : 1),
        seconds: (performance.now() - started) / 1000,
      }),
    );
  });
}

const results = new Map();
/** A promise per step that resolves once it has finished (Node 20 has no Promise.withResolvers). */
const finished = new Map(
  STEPS.map((step) => {
    let resolve;
    const promise = new Promise((done) => {
      resolve = done;
    });
    return [step.name, { promise, resolve }];
  }),
);
let printed = 0;

/** Prints every finished step whose earlier steps have all been printed. */
function printReady() {
  while (printed < STEPS.length && results.has(STEPS[printed].name)) {
    const step = STEPS[printed];
    const result = results.get(step.name);
    const verdict = result.code === 0 ? "passed" : `failed (exit ${result.code})`;
    process.stdout.write(`\n── ${step.name}: ${step.command}\n${result.output}`);
    process.stdout.write(`── ${step.name} ${verdict} in ${result.seconds.toFixed(1)} s\n`);
    printed++;
  }
}

async function runStep(step) {
  await Promise.all((step.after ?? []).map((name) => finished.get(name).promise));
  const result = await run(step);
  results.set(step.name, result);
  finished.get(step.name).resolve();
  printReady();
}

const started = performance.now();
if (values.serial) {
  for (const step of STEPS) await runStep(step);
} else {
  const lanes = [...new Set(STEPS.map((step) => step.lane))];
  await Promise.all(
    lanes.map(async (lane) => {
      for (const step of STEPS.filter((each) => each.lane === lane)) await runStep(step);
    }),
  );
}

const failed = STEPS.filter((step) => results.get(step.name).code !== 0);
process.stdout.write("\n── every step\n");
for (const step of STEPS) {
  const result = results.get(step.name);
  process.stdout.write(
    `${result.code === 0 ? "ok  " : "FAIL"} ${step.name.padEnd(14)} ${result.seconds.toFixed(1).padStart(6)} s\n`,
  );
}
process.stdout.write(
  `${failed.length === 0 ? "all passed" : `${failed.length} failed: ${failed.map((step) => step.name).join(", ")}`} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
