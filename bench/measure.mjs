// How the benchmark measures: latency at concurrency 1 with the series interleaved, throughput over
// a fixed time, and the CPU time workerd spent across a batch, divided by its requests.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

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

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** `{ n, p50, p99, mean }` of samples in milliseconds. */
export function summarise(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
  };
}

/**
 * Latency at concurrency 1. Each round sends one request of every series, in order, so drift on a
 * noisy machine (another process, a GC, a thermal step) reaches every series equally. `series` maps
 * a name to `(index) => Promise<void>` that sends request `index` and checks its answer.
 */
export async function interleavedLatency(series, { warmup, samples }) {
  const names = Object.keys(series);
  const timings = Object.fromEntries(names.map((name) => [name, []]));
  for (let index = 0; index < warmup + samples; index++) {
    for (const name of names) {
      const started = performance.now();
      await series[name](index);
      if (index >= warmup) timings[name].push(performance.now() - started);
    }
  }
  return Object.fromEntries(names.map((name) => [name, summarise(timings[name])]));
}

/**
 * Requests per second of `concurrency` callers, each sending `send(caller, index)` back to back for
 * `seconds` (or until `maxRequests`, for a run whose budget would run out), after a short warmup.
 * With `pid`, also the CPU that process spent per request over the same batch.
 */
export async function throughput(
  send,
  { concurrency, seconds, maxRequests = Number.POSITIVE_INFINITY, pid },
) {
  await Promise.all(Array.from({ length: concurrency }, (_, caller) => send(caller, caller)));
  let done = 0;
  let issued = 0;
  const cpuBefore = pid ? cpuMs(pid) : 0;
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
    concurrency,
    requests: done,
    seconds: elapsedMs / 1000,
    per_s: Math.round((done * 1000) / elapsedMs),
    ...(pid ? { cpu_ms_per_request: (cpuMs(pid) - cpuBefore) / done } : {}),
  };
}

/** `count` sends at `concurrency`, for filling a run; no timing. */
export async function drive(send, { concurrency, count }) {
  let issued = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (issued < count) await send(issued++);
    }),
  );
}
