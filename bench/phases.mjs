// The measured phases of `npm run bench`, each against a running stack's workload.
import { cpuMs, drive, interleavedLatency, summarise, throughput } from "./measure.mjs";
import { RUN_LIMITS } from "./workload.mjs";

// Calls a run may still take once a phase's warmup is counted; its ceiling refuses the rest.
const CALLS_PER_RUN = RUN_LIMITS.max_calls - 200;
const WRITES_PER_RUN = RUN_LIMITS.max_writes - 100;

/** Opens as many runs as `count` calls need at `perRun` calls each. */
async function runsFor(workload, count, perRun) {
  const runs = [];
  for (let opened = 0; opened * perRun < count; opened++) runs.push(await workload.openRun());
  return runs;
}

/**
 * c=1 latency of the five requests, interleaved: hello, the read straight to the sandbox, the same
 * read through the proxy, a first write (distinct arguments each time) and its replay.
 */
export async function latencyPhase(workload, { warmup, samples }) {
  const count = warmup + samples;
  const readRuns = await runsFor(workload, count, CALLS_PER_RUN);
  // A write and its replay are two calls of the run and one write of its budget.
  const writesPerRun = Math.min(WRITES_PER_RUN, CALLS_PER_RUN / 2);
  const writeRuns = await runsFor(workload, count, writesPerRun);
  const readRun = (index) => readRuns[Math.floor(index / CALLS_PER_RUN)];
  const writeRun = (index) => writeRuns[Math.floor(index / writesPerRun)];
  return interleavedLatency(
    {
      hello: () => workload.hello(),
      direct_read: (index) => workload.directRead(index),
      proxied_read: (index) => workload.proxiedRead(readRun(index), index),
      first_write: (index) => workload.firstWrite(writeRun(index), index),
      replay: (index) => workload.replay(writeRun(index), index),
    },
    { warmup, samples },
  );
}

/**
 * Requests/s at `concurrency`: hello, direct reads, proxied reads of one run shared by every caller,
 * and of one run per caller; each with workerd's CPU per request over its batch.
 */
export async function throughputPhase(workload, { concurrency, seconds, pid }) {
  const options = { concurrency, seconds, pid };
  const oneRun = await workload.openRun();
  const manyRuns = [];
  for (let caller = 0; caller < concurrency; caller++) manyRuns.push(await workload.openRun());
  return {
    hello: await throughput(() => workload.hello(), options),
    direct_read: await throughput((_, index) => workload.directRead(index), options),
    proxied_read_one_run: await throughput((_, index) => workload.proxiedRead(oneRun, index), {
      ...options,
      maxRequests: CALLS_PER_RUN,
    }),
    proxied_read_many_runs: await throughput(
      (caller, index) => workload.proxiedRead(manyRuns[caller], index),
      options,
    ),
  };
}

/** Replays/s of one run at `concurrency`, over `tickets` tickets written first. */
export async function replayPhase(workload, { concurrency, seconds, pid, tickets = 100 }) {
  const run = await workload.openRun();
  await drive((index) => workload.firstWrite(run, index), { concurrency, count: tickets });
  return throughput((_, index) => workload.replay(run, index % tickets), {
    concurrency,
    seconds,
    pid,
    maxRequests: CALLS_PER_RUN - tickets,
  });
}

/**
 * The fill's calls/s and workerd's CPU ms per call of each thousand, each with the last thousand's
 * over the first's, as two lines (CPU per call moves less than the rate on a busy machine).
 */
export function fillRates({ fill_calls_per_s_by_thousand: rates, fill_cpu_ms_per_call_by_thousand: cpu }) {
  const kept = (values) => (values.length > 1 ? (values.at(-1) / values[0]).toFixed(2) : "n/a");
  const lines = [`fill calls/s by thousand: ${rates.join(", ")} (last / first ${kept(rates)})`];
  if (cpu?.length)
    lines.push(`fill CPU ms per call by thousand: ${cpu.join(", ")} (last / first ${kept(cpu)})`);
  return lines.join("\n");
}

/**
 * Fills one run to its 10,000-call ceiling with proxied reads, then times the first page of its
 * trace, `samples` times after a warmup. Records what the page holds, whatever its shape.
 */
export async function tracePhase(workload, { samples, warmup = 5, pid }) {
  const run = await workload.openRun();
  // Calls/s (and, given workerd's pid, its CPU per call) of each thousand: whether a call costs more as its run grows.
  const completed = [];
  const cpuPerCall = [];
  let cpuBefore = pid ? cpuMs(pid) : 0;
  const fillStarted = performance.now();
  await drive(
    async (index) => {
      await workload.proxiedRead(run, index);
      completed.push(performance.now());
      if (pid && completed.length % 1000 === 0) {
        const cpu = cpuMs(pid);
        cpuPerCall.push(Number(((cpu - cpuBefore) / 1000).toFixed(2)));
        cpuBefore = cpu;
      }
    },
    { concurrency: 64, count: RUN_LIMITS.max_calls },
  );
  const fillPerSecond = [];
  for (let end = 1000, start = fillStarted; end <= completed.length; end += 1000) {
    const at = completed[end - 1] ?? start;
    fillPerSecond.push(Math.round((1000 * 1000) / (at - start)));
    start = at;
  }
  const timings = [];
  let body = Buffer.alloc(0);
  for (let index = 0; index < warmup + samples; index++) {
    const started = performance.now();
    body = await workload.tracePage(run);
    if (index >= warmup) timings.push(performance.now() - started);
  }
  const { data } = JSON.parse(body.toString("utf8"));
  const { p50, p99 } = summarise(timings);
  return {
    calls: RUN_LIMITS.max_calls,
    fill_calls_per_s_by_thousand: fillPerSecond,
    fill_cpu_ms_per_call_by_thousand: cpuPerCall,
    samples,
    p50_ms: p50,
    p99_ms: p99,
    bytes: body.length,
    entries_returned: Array.isArray(data?.entries) ? data.entries.length : null,
    data_fields: data && typeof data === "object" ? Object.keys(data) : [],
  };
}
