// The measured phases of `npm run bench`, each against a running stack's workload.
import { setTimeout as sleep } from "node:timers/promises";
import { drive, interleavedThroughput, serialBatch } from "./measure.mjs";
import { pairedDifference, pairOrder, summarise } from "./stats.mjs";
import { READ_ORDERS, RUN_LIMITS } from "./workload.mjs";

// Calls a run may still take once a phase's warmup is counted; its ceiling refuses the rest.
const CALLS_PER_RUN = RUN_LIMITS.max_calls - 200;
const WRITES_PER_RUN = RUN_LIMITS.max_writes - 100;
/** Calls in flight while the trace phase fills its run. */
const FILL_CONCURRENCY = 16;
/** How many orders the idle-run phase's warm run keeps reading while the idle objects wait. */
const WARM_ORDERS = 20;
/**
 * The proxy reuses an upstream credential it signed for the same request of the same run only
 * while the credential has more than the tool's timeout and half its margin left, so at most about
 * a second after signing it (`authorizationFor`, src/upstream/authorize.ts). The idle-run phase's warm
 * run reads its timed orders this long before their timed reads at least, so each timed read signs
 * its own credential, as the idle run's read, whose credential expired as its object left memory.
 */
const CREDENTIAL_REUSE_GAP_MS = 2_000;
/**
 * How long after a batch of opens its CPU is still counted: a run whose ledger exists but is not
 * called has its directory entry delivered by its alarm, 10 s after the ledger was created
 * (OPENED_ENTRY_WAIT_MS, src/ledger/run-index.ts), counted with a margin. The bench's opens have no
 * task key and store nothing, so they set no alarm; the wait keeps any work an open leaves for
 * later in its figure.
 */
const ALARM_SETTLE_MS = 11_500;
/** How many runs the many-runs batch spreads its reads over. */
export const MANY_RUNS = 200;

/** Opens as many runs as `count` calls need at `perRun` calls each. */
async function runsFor(workload, count, perRun) {
  const runs = [];
  for (let opened = 0; opened * perRun < count; opened++) runs.push(await workload.openRun());
  return runs;
}

/**
 * c=1 latency, in rounds: each round sends hello, the floor worker (alone, then with its upstream
 * hop), the read direct to the sandbox and through the proxy back to back (alternating which goes
 * first), the same read as an MCP session's tools/call, a first write (distinct arguments each
 * time) and its replay. The proxied read's cost is the per-round difference from its direct pair;
 * the MCP call's, from the REST read.
 */
export async function latencyPhase(workload, { warmup, samples }) {
  const count = warmup + samples;
  const readRuns = await runsFor(workload, count, CALLS_PER_RUN);
  // A write and its replay are two calls of the run and one write of its budget.
  const writesPerRun = Math.min(WRITES_PER_RUN, CALLS_PER_RUN / 2);
  const writeRuns = await runsFor(workload, count, writesPerRun);
  const mcpCall = await workload.mcpSession();
  const readRun = (index) => readRuns[Math.floor(index / CALLS_PER_RUN)];
  const writeRun = (index) => writeRuns[Math.floor(index / writesPerRun)];
  const series = {
    hello: () => workload.hello(),
    floor: () => workload.floor(),
    floor_upstream: () => workload.floorThroughUpstream(),
    direct_read: (index) => workload.directRead(index),
    proxied_read: (index) => workload.proxiedRead(readRun(index), index),
    mcp_session_call: (index) => mcpCall(index),
    first_write: (index) => workload.firstWrite(writeRun(index), index),
    replay: (index) => workload.replay(writeRun(index), index),
  };
  const timings = Object.fromEntries(Object.keys(series).map((name) => [name, []]));
  for (let index = 0; index < count; index++) {
    const order = [
      "hello",
      "floor",
      "floor_upstream",
      ...pairOrder(index, ["direct_read", "proxied_read"]),
      "mcp_session_call",
      "first_write",
      "replay",
    ];
    for (const name of order) {
      const started = performance.now();
      await series[name](index);
      if (index >= warmup) timings[name].push(performance.now() - started);
    }
  }
  return {
    latency_ms: Object.fromEntries(Object.entries(timings).map(([name, list]) => [name, summarise(list)])),
    paired_ms: {
      proxied_minus_direct: pairedDifference(timings.direct_read, timings.proxied_read),
      // What one DO hop and one commit add over hello in the same round: the tail a commit has here.
      floor_minus_hello: pairedDifference(timings.hello, timings.floor),
      // The same with one service-binding hop to an upstream before the commit: the least a read
      // through a run's object can add over a direct read, with none of the proxy's own work.
      floor_upstream_minus_hello: pairedDifference(timings.hello, timings.floor_upstream),
      mcp_minus_rest: pairedDifference(timings.proxied_read, timings.mcp_session_call),
    },
  };
}

/** The median of `values`. */
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/**
 * workerd's CPU per request at c=1: `rounds` rounds, each a serial batch of `count` requests of
 * every series in turn (hello, the floor worker, the read direct and through the proxy, the replay,
 * the read as an MCP session's tools/call), so whatever else the machine does reaches each alike;
 * min and median of the rounds per series. The proxy's own CPU per read is proxied − direct − floor.
 * The reads (REST and MCP) go to one run each, which has read every order once before the first
 * round: a run's steady state, where a read's subject is already in the run's directory entry (a
 * run's first reads of new subjects also send the entry to the directory).
 */
export async function cpuPhase(workload, { rounds, count, pid }) {
  const mcpCall = await workload.mcpSession();
  const readRun = await workload.openRun();
  for (let index = 0; index < READ_ORDERS; index++) {
    await workload.proxiedRead(readRun, index);
    await mcpCall(index);
  }
  const series = {
    hello: { send: () => workload.hello() },
    floor: { send: () => workload.floor() },
    direct_read: { send: (_, index) => workload.directRead(index) },
    proxied_read: { send: (_, index) => workload.proxiedRead(readRun, index) },
    replay: {
      // A fresh run's first writes, written before the batch's CPU count starts.
      prepare: async () => {
        const run = await workload.openRun();
        for (let index = 0; index < count; index++) await workload.firstWrite(run, index);
        return run;
      },
      send: (run, index) => workload.replay(run, index),
    },
    mcp_session_call: { send: (_, index) => mcpCall(index) },
  };
  const perRound = Object.fromEntries(Object.keys(series).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, { prepare, send }] of Object.entries(series)) {
      const ctx = prepare ? await prepare() : undefined;
      const batch = await serialBatch((index) => send(ctx, index), { count, pid: pid() });
      perRound[name].push(batch.cpu_ms_per_request);
    }
  }
  return {
    how: `workerd CPU (from /proc, in clock ticks) over serial batches of ${count} requests, ${rounds} rounds of every series in turn; min and median of the rounds; reads of a run that has read every order once`,
    rounds,
    count,
    cpu_ms: Object.fromEntries(
      Object.entries(perRound).map(([name, list]) => [
        name,
        { min: Math.min(...list), median: median(list) },
      ]),
    ),
  };
}

/**
 * Run open: `samples` opens one after another (latency, and workerd's CPU per open, any work it
 * leaves for later included), as many opens each followed by its first read, which creates the
 * run's ledger (CPU per pair), as many new floor objects one after another (what a new object costs here,
 * beside it), then `batch` opens at `concurrency` (opens/s) and as many new floor objects at the
 * same concurrency. Resolves with the figures, the runs the batch opened and the floor objects it
 * created (the throughput phase spreads reads over the runs and floor worker hits over the objects).
 */
export async function runOpenPhase(workload, { samples, batch, concurrency, pid }) {
  // An open without a task key stores nothing (src/runs/pending-open.ts); whatever an open left
  // for later (an alarm) would ring within the settle, and the opens' CPU includes it.
  const serial = await serialBatch(() => workload.openRun(), {
    count: samples,
    pid: pid(),
    settleMs: ALARM_SETTLE_MS,
  });
  // What an agent's run start costs: the open and its first read, which creates the run's ledger
  // and whose commit carries its directory entry.
  const withRead = await serialBatch(async (index) => workload.proxiedRead(await workload.openRun(), index), {
    count: samples,
    pid: pid(),
    settleMs: ALARM_SETTLE_MS,
  });
  // What creating any new object costs on this runtime: the floor worker's class, a new object per
  // request (its table created, one row inserted), in the same loop as the opens.
  const stamp = Date.now().toString(36);
  const newObjects = await serialBatch((index) => workload.floor(`new-${stamp}-${index}`), {
    count: samples,
    pid: pid(),
  });
  const runs = [];
  const cpuBefore = serial.cpu_ms_per_request;
  const wall = await drive(
    async () => {
      runs.push(await workload.openRun());
    },
    { concurrency, count: batch },
  );
  const floorObjects = Array.from({ length: batch }, (_, index) => `many-${stamp}-${index}`);
  const floorWall = await drive((index) => workload.floor(floorObjects[index]), {
    concurrency,
    count: batch,
  });
  // The throughput phase spreads reads over these runs as it spreads hits over the floor objects
  // created above, so their objects exist before its clock starts too: an open stores nothing, and
  // each run's first read creates its ledger here.
  await drive((index) => workload.proxiedRead(runs[index], index), { concurrency, count: batch });
  // Whatever the opens and first reads left for later runs now, not in the next phase's CPU.
  await sleep(ALARM_SETTLE_MS);
  return {
    figures: {
      latency_ms: summarise(serial.timings),
      cpu_ms_per_open: cpuBefore,
      open_and_first_read_cpu_ms: withRead.cpu_ms_per_request,
      new_floor_object_cpu_ms: newObjects.cpu_ms_per_request,
      new_floor_object_p50_ms: summarise(newObjects.timings).p50,
      opens_per_s: (batch * 1000) / wall,
      new_floor_objects_per_s: (batch * 1000) / floorWall,
      concurrency,
      samples,
      batch,
    },
    runs,
    floorObjects,
  };
}

/**
 * A first write's workerd CPU (proxy and sandbox), over `count` writes one after another in a fresh
 * run; then as many writes' two sandbox requests (the POST and the postcondition's read) sent
 * straight to the sandbox one after another, so the proxy's share is the difference.
 */
export async function firstWritePhase(workload, { count, pid }) {
  const run = await workload.openRun();
  const offset = 1_000_000;
  const proxied = await serialBatch((index) => workload.firstWrite(run, offset + index), {
    count,
    pid: pid(),
  });
  const directWrites = await workload.directWrites(count, offset);
  const direct = await serialBatch((index) => directWrites[index](), { count, pid: pid() });
  return {
    how: "workerd CPU over each batch of writes one after another, divided by the writes: through the proxy, then straight to the sandbox (POST /tickets with its key, then GET /tickets/{id}); the POSTs' credentials minted before the batch, each GET's in the bench's process between its two requests, while workerd waits",
    cpu_ms_per_write: proxied.cpu_ms_per_request,
    direct_cpu_ms_per_write: direct.cpu_ms_per_request,
    proxy_share_cpu_ms: proxied.cpu_ms_per_request - direct.cpu_ms_per_request,
    writes: count,
  };
}

/**
 * Throughput at `concurrency`, batches interleaved round-robin over `rounds` rounds of `seconds`:
 * hello, the floor worker in one object and spread over `manyFloorObjects` (hit i to object i mod
 * 200: what spreading requests over 200 objects costs a bare object, beside what it costs the
 * proxy's runs), direct reads, proxied reads of one run shared by every caller (a fresh run each
 * round), of `manyRuns` runs (request i to run i mod 200), and replays of one run (a fresh run and
 * its 100 tickets each round, written before the round's clock starts).
 */
export async function throughputPhase(
  workload,
  { concurrency, seconds, rounds, pid, manyRuns, manyFloorObjects },
) {
  const tickets = 100;
  return {
    concurrency,
    round_seconds: seconds,
    rounds,
    batches: await interleavedThroughput(
      {
        hello: { send: () => workload.hello() },
        floor: { send: () => workload.floor() },
        many_floor_objects: {
          send: (_, __, index) => workload.floor(manyFloorObjects[index % manyFloorObjects.length]),
        },
        direct_read: { send: (_, __, index) => workload.directRead(index) },
        one_run: {
          prepare: () => workload.openRun(),
          send: (run, _, index) => workload.proxiedRead(run, index),
          maxRequests: CALLS_PER_RUN,
        },
        many_runs: {
          send: (_, __, index) => workload.proxiedRead(manyRuns[index % manyRuns.length], index),
        },
        replay: {
          prepare: async () => {
            const run = await workload.openRun();
            await drive((index) => workload.firstWrite(run, index), { concurrency: 16, count: tickets });
            return run;
          },
          send: (run, _, index) => workload.replay(run, index % tickets),
          maxRequests: CALLS_PER_RUN - tickets,
        },
      },
      { concurrency, seconds, rounds, pid },
    ),
  };
}

/**
 * workerd evicts a Durable Object after 10 s without a request (production after 70–140 s); the
 * idle phase leaves its objects alone this long, with a margin, before their next call.
 */
const EVICTION_WAIT_MS = 13_000;

/**
 * The next call of a run whose object left memory: `count` runs (and as many floor worker objects)
 * each take one call, then leave memory, and each round times a warm read, the idle run's next
 * read, a warm floor hit and the idle floor object's next hit. `leave` says how they leave:
 * `"eviction"`, as an idle object does (the isolates, a warm run and a warm floor object stay busy
 * while the idle objects go untouched past workerd's eviction timeout; each idle floor object must
 * answer that it was constructed anew, or the phase fails), or `"restart"`, as after a crash or a
 * redeploy (workerd restarts on the same storage, so each object also recovers its write-ahead log
 * on its first open; the isolates are warmed again on other runs and objects). Both timed reads
 * name an order their run has read already (the idle run the one it read before, the warm run one
 * it read in its warmup, before the orders it keeps reading) and neither reuses an upstream
 * credential (`CREDENTIAL_REUSE_GAP_MS`), so they differ only in whether the run's object is in
 * memory. The first `warmup` rounds are not counted.
 */
export async function idleRunPhase(workload, stack, { count, warmup, leave }) {
  const idleRuns = [];
  for (let index = 0; index < count; index++) {
    const run = await workload.openRun();
    await workload.proxiedRead(run, index);
    await workload.floor(`idle-${leave}-${index}`);
    idleRuns.push(run);
  }
  if (leave === "restart") await stack.restart();
  const warmRun = await workload.openRun();
  const warmRound = async (index) => {
    await workload.directRead(index % WARM_ORDERS);
    await workload.proxiedRead(warmRun, index % WARM_ORDERS);
    await workload.floor();
  };
  // The warm run's timed reads name orders after the ones it keeps reading, each read once here.
  const timedOrder = (index) => WARM_ORDERS + index;
  for (let index = 0; index < count; index++) await workload.proxiedRead(warmRun, timedOrder(index));
  for (let index = 0; index < WARM_ORDERS; index++) await warmRound(index);
  const until = performance.now() + (leave === "eviction" ? EVICTION_WAIT_MS : CREDENTIAL_REUSE_GAP_MS);
  for (let index = 0; performance.now() < until; index++) {
    await warmRound(index);
    await sleep(50);
  }
  const timings = { warm_read: [], idle_run_read: [], floor_warm: [], floor_evicted: [] };
  const timed = async (name, index, send) => {
    const started = performance.now();
    const answer = await send();
    if (index >= warmup) timings[name].push(performance.now() - started);
    return answer;
  };
  for (let index = 0; index < count; index++) {
    await timed("warm_read", index, () => workload.proxiedRead(warmRun, timedOrder(index)));
    await timed("idle_run_read", index, () => workload.proxiedRead(idleRuns[index], index));
    await timed("floor_warm", index, () => workload.floor());
    const woken = await timed("floor_evicted", index, () => workload.floor(`idle-${leave}-${index}`));
    if (!woken) {
      throw new Error(
        `bench: idle floor object ${index} was still in memory after ${leave === "eviction" ? `${EVICTION_WAIT_MS} ms without a request` : "the restart"}; the idle-run figures would time warm objects`,
      );
    }
  }
  const p50 = (name) => summarise(timings[name]).p50;
  return {
    how:
      leave === "eviction"
        ? `runs and floor objects each called once, then left without a request for ${EVICTION_WAIT_MS / 1000} s (workerd evicts an object after 10 s) while other runs and objects stay busy, then each one's next call; each timed read names an order its run has read already`
        : "runs and floor objects each called once, workerd restarted on the same storage, isolates warmed on other runs and objects, then each one's next call; each timed read names an order its run has read already",
    samples: count - warmup,
    latency_ms: Object.fromEntries(Object.entries(timings).map(([name, list]) => [name, summarise(list)])),
    added_p50_ms: p50("idle_run_read") - p50("warm_read"),
    floor_added_p50_ms: p50("floor_evicted") - p50("floor_warm"),
  };
}

/**
 * Fills one run to its 10,000-call ceiling with proxied reads, then times the first page of its
 * trace, `samples` times after a warmup. Records what the page holds, whatever its shape.
 */
export async function tracePhase(workload, { samples, warmup = 5 }) {
  const run = await workload.openRun();
  // Calls/s of each thousand: whether a call costs more as its run grows.
  const completed = [];
  const fillStarted = performance.now();
  await drive(
    async (index) => {
      const sent = performance.now();
      try {
        await workload.proxiedRead(run, index);
      } catch (error) {
        const waited = Math.round(performance.now() - sent);
        throw new Error(
          `${error.message} (after ${completed.length} calls of the fill; this one waited ${waited} ms)`,
        );
      }
      completed.push(performance.now());
    },
    // 16, not 64: every call of the fill queues at the one object, and at 64 in flight on a loaded
    // 2-core machine a call waited up to 40 s, after which workerd reset every connection at once.
    { concurrency: FILL_CONCURRENCY, count: RUN_LIMITS.max_calls },
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
    samples,
    p50_ms: p50,
    p99_ms: p99,
    bytes: body.length,
    entries_returned: Array.isArray(data?.entries) ? data.entries.length : null,
    data_fields: data && typeof data === "object" ? Object.keys(data) : [],
  };
}
