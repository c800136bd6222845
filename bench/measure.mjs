// How the benchmark measures: throughput over a fixed time, with the CPU time workerd spent across
// a batch divided by its requests; batches interleaved round-robin; and serial batches for CPU.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { dropIdleConnections, resent } from "./http.mjs";
import { combineRounds, roundRobin } from "./stats.mjs";

/** Kernel clock ticks per second, the unit of /proc/<pid>/stat's CPU times. */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system, every thread) process `pid` has used so far, in milliseconds. */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name; utime and stime are fields 14 and 15 of the whole line.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/**
 * `concurrency` callers, each sending `send(caller, index)` back to back for `seconds` (or until
 * `maxRequests`, for a run whose budget would run out), after one warmup request per caller.
 * Returns the requests sent (a request resent after a reset is one more), the time, and the CPU
 * workerd process `pid` spent over the batch.
 */
export async function throughput(
  send,
  { concurrency, seconds, maxRequests = Number.POSITIVE_INFINITY, pid },
) {
  // The pool may hold connections idle since the last batch, which workerd is about to close.
  dropIdleConnections();
  await Promise.all(Array.from({ length: concurrency }, (_, caller) => send(caller, caller)));
  let done = 0;
  let issued = 0;
  const resentBefore = resent.count;
  const cpuBefore = cpuMs(pid);
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, caller) => {
      while (performance.now() < until && issued < maxRequests) {
        issued++;
        await send(caller, concurrency + issued);
        done++;
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  return {
    requests: done + (resent.count - resentBefore),
    seconds: elapsedMs / 1000,
    cpu_ms: cpuMs(pid) - cpuBefore,
  };
}

/**
 * Throughput batches interleaved round-robin: `rounds` short rounds of every batch in `batches`
 * (`name: { prepare?(): Promise<ctx>, send(ctx, caller, index), maxRequests? }`), so whatever else
 * the machine does reaches every batch alike. `prepare` (opening a fresh run, writing the tickets a
 * replay batch replays) runs before its round's clock and CPU count start.
 */
export async function interleavedThroughput(batches, { concurrency, seconds, rounds, pid }) {
  const results = Object.fromEntries(Object.keys(batches).map((name) => [name, []]));
  for (const { name } of roundRobin(Object.keys(batches), rounds)) {
    const batch = batches[name];
    const ctx = batch.prepare ? await batch.prepare() : undefined;
    results[name].push(
      await throughput((caller, index) => batch.send(ctx, caller, index), {
        concurrency,
        seconds,
        pid: pid(),
        ...(batch.maxRequests ? { maxRequests: batch.maxRequests } : {}),
      }),
    );
  }
  return Object.fromEntries(Object.entries(results).map(([name, list]) => [name, combineRounds(list)]));
}

/** `count` sends at `concurrency`; resolves with the wall time, in milliseconds. */
export async function drive(send, { concurrency, count }) {
  dropIdleConnections();
  let issued = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (issued < count) await send(issued++);
    }),
  );
  return performance.now() - started;
}

/**
 * `count` sends one after another, each timed; with workerd's CPU per send over the whole batch,
 * and over `settleMs` after it (work the sends left for later, such as an alarm they set, counts).
 */
export async function serialBatch(send, { count, pid, settleMs = 0 }) {
  const timings = [];
  const cpuBefore = cpuMs(pid);
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await send(index);
    timings.push(performance.now() - started);
  }
  if (settleMs > 0) await sleep(settleMs);
  return { timings, cpu_ms_per_request: (cpuMs(pid) - cpuBefore) / count };
}
