#!/usr/bin/env node
// `npm run soak`: the model-based test's long share (test/workerd/exactly-once.model.test.ts),
// SOAK_RUNS sequences (default 60) in chunks of at most SOAK_CHUNK (default 10), each chunk a vitest
// process of its own with its own seed. A chunk is a fresh workerd: the test harness
// (@cloudflare/vitest-pool-workers up to 0.23.0) wraps a Durable Object class's prototype in one more
// Proxy at every construction of an instance, so property reads grow deeper with every object the
// soak restarts, and after a few thousand the isolate's stack overflows
// (cloudflare/workers-sdk#15092); no release carries the fix yet. SOAK_SEED replays one chunk: its
// seed and its size, as the failing chunk printed them.
import { spawnSync } from "node:child_process";

/** A positive integer from the environment, or `fallback`. */
function positive(name, fallback) {
  const value = Number.parseInt(process.env[name] ?? "", 10);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

const total = positive("SOAK_RUNS", 60);
const chunk = positive("SOAK_CHUNK", 10);
const replay = positive("SOAK_SEED", 0);

/** Runs `runs` sequences seeded `seed` in their own vitest process; true when they all held. */
function soak(seed, runs) {
  const result = spawnSync("npx", ["vitest", "run", "test/workerd/exactly-once.model.test.ts"], {
    stdio: "inherit",
    env: { ...process.env, SOAK_SEED: String(seed), SOAK_RUNS: String(runs) },
    // npx is a .cmd shim on Windows and needs a shell there.
    shell: process.platform === "win32",
  });
  return result.status === 0;
}

if (replay > 0) {
  console.log(`soak: replaying seed ${replay}, ${total} sequence(s)`);
  process.exit(soak(replay, total) ? 0 : 1);
}

const base = Date.now() % 2_147_483_647;
const chunks = Math.ceil(total / chunk);
for (let index = 0; index < chunks; index++) {
  const seed = (base + index) % 2_147_483_647 || 1;
  const runs = Math.min(chunk, total - index * chunk);
  console.log(`soak: chunk ${index + 1} of ${chunks}, seed ${seed}, ${runs} sequence(s)`);
  if (!soak(seed, runs)) {
    console.error(
      `soak: chunk ${index + 1} failed; replay it with SOAK_SEED=${seed} SOAK_RUNS=${runs} npm run soak`,
    );
    process.exit(1);
  }
}
console.log(`soak: ${total} sequence(s) in ${chunks} chunk(s) held every rule`);
