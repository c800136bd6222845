#!/usr/bin/env node
// `npm run soak`: the long share of the generated tests, in two parts.
//
// model: the model-based test (test/workerd/exactly-once.model.test.ts), SOAK_RUNS sequences
// (default 60) in chunks of at most SOAK_CHUNK (default 10), each chunk a vitest process of its own
// with its own seed. A chunk is a fresh workerd: the test harness (@cloudflare/vitest-pool-workers
// up to 0.23.0) wraps a Durable Object class's prototype in one more Proxy at every construction of
// an instance, so property reads grow deeper with every object the soak restarts, and after a few
// thousand the isolate's stack overflows (cloudflare/workers-sdk#15092); no release carries the fix
// yet. vitest.config.ts now serves the harness with the fix (test/pool-prototype-fix.ts); the chunks
// stay, each with a seed a failure can be replayed from.
//
// properties: every test file that plans its fast-check properties with test/property-plan.ts, each
// property SOAK_FACTOR times (default 10) its CI share, from one seed the soak prints.
//
//   npm run soak                                   both parts, fresh seeds
//   npm run soak -- --only model|properties        one part
//   SOAK_SEED=<seed> SOAK_RUNS=<n> npm run soak -- --only model           replays a model chunk
//   SOAK_SEED=<seed> SOAK_FACTOR=<f> npm run soak -- --only properties    replays the properties
// A failure prints the command that replays it.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { root } from "./local-stack.mjs";

/** A positive integer from the environment, or `fallback`. */
function positive(name, fallback) {
  const value = Number.parseInt(process.env[name] ?? "", 10);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

const PARTS = ["model", "properties"];

let only;
try {
  ({
    values: { only },
  } = parseArgs({ options: { only: { type: "string" } } }));
} catch (error) {
  console.error(`soak: ${error.message}; the one option is --only ${PARTS.join("|")}`);
  process.exit(2);
}
if (only !== undefined && !PARTS.includes(only)) {
  console.error(`soak: --only must be one of ${PARTS.join(", ")}, not "${only}"`);
  process.exit(2);
}
const replay = positive("SOAK_SEED", 0);
if (replay > 0 && only === undefined) {
  console.error(
    "soak: SOAK_SEED replays one part; name it: npm run soak -- --only model (with SOAK_RUNS) or --only properties (with SOAK_FACTOR)",
  );
  process.exit(2);
}

/** Runs vitest on `files` with `env` added; true when every test passed. */
function vitest(files, env) {
  const result = spawnSync("npx", ["vitest", "run", ...files], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, ...env },
    // npx is a .cmd shim on Windows and needs a shell there.
    shell: process.platform === "win32",
  });
  return result.status === 0;
}

const freshSeed = (offset = 0) => ((Date.now() % 2_147_483_647) + offset) % 2_147_483_647 || 1;

/** The model-based test's sequences, in chunks; false when a chunk failed. */
function soakModel() {
  const total = positive("SOAK_RUNS", 60);
  const chunk = positive("SOAK_CHUNK", 10);
  const run = (seed, runs) =>
    vitest(["test/workerd/exactly-once.model.test.ts"], { SOAK_SEED: String(seed), SOAK_RUNS: String(runs) });
  if (replay > 0) {
    console.log(`soak: replaying the model's seed ${replay}, ${total} sequence(s)`);
    return run(replay, total);
  }
  const base = freshSeed();
  const chunks = Math.ceil(total / chunk);
  for (let index = 0; index < chunks; index++) {
    const seed = (base + index) % 2_147_483_647 || 1;
    const runs = Math.min(chunk, total - index * chunk);
    console.log(`soak: model chunk ${index + 1} of ${chunks}, seed ${seed}, ${runs} sequence(s)`);
    if (!run(seed, runs)) {
      console.error(
        `soak: model chunk ${index + 1} failed; replay it with SOAK_SEED=${seed} SOAK_RUNS=${runs} npm run soak -- --only model`,
      );
      return false;
    }
  }
  console.log(`soak: ${total} model sequence(s) in ${chunks} chunk(s) held every rule`);
  return true;
}

/** The test files under test/ that plan their properties with test/property-plan.ts. */
function propertyFiles() {
  return readdirSync(join(root, "test"), { recursive: true })
    .filter((file) => file.endsWith(".test.ts"))
    .map((file) => join("test", file))
    .filter((file) => {
      const text = readFileSync(join(root, file), "utf8");
      return text.includes("propertyPlans(") && text.includes("fc.assert(");
    })
    .sort();
}

/** Every planned property at SOAK_FACTOR times its CI share, from one seed; false when one failed. */
function soakProperties() {
  const factor = positive("SOAK_FACTOR", 10);
  const seed = replay > 0 ? replay : freshSeed(7_919);
  const files = propertyFiles();
  if (files.length === 0) {
    console.error("soak: no test file plans its properties with test/property-plan.ts");
    return false;
  }
  console.log(`soak: properties of ${files.length} file(s), ${factor}x their CI share, seed ${seed}`);
  if (!vitest(files, { SOAK_FACTOR: String(factor), SOAK_SEED: String(seed) })) {
    console.error(
      `soak: a property failed; replay it with SOAK_SEED=${seed} SOAK_FACTOR=${factor} npm run soak -- --only properties`,
    );
    return false;
  }
  console.log(`soak: every property held at ${factor}x its CI share`);
  return true;
}

const parts = { model: soakModel, properties: soakProperties };
for (const part of only === undefined ? PARTS : [only]) {
  if (!parts[part]()) process.exit(1);
}
