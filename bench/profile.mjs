// Where the proxy's CPU goes, per stage: V8's sampling profiler, driven over workerd's inspector
// (the DevTools protocol), records the proxy's isolate (its Worker and its Durable Objects) while a
// stage's calls run one after another; each sampled function is named through the bundle's source
// map, and the ten heaviest (self time) are kept with their share of the stage's busy time.
import { readFileSync } from "node:fs";
import { fetch } from "miniflare";
import { sourceMapLookup } from "./source-map.mjs";

/** Microseconds between samples: fine enough for calls of a millisecond or two. */
const SAMPLING_INTERVAL_US = 50;
const TOP = Number(process.env.BENCH_PROFILE_TOP ?? 10);
/**
 * The most one sample counts for. V8 stamps each sample with the time since the one before; the
 * first sample after the isolate waited (for its object, a commit, the upstream) carries the whole
 * wait, which is not CPU. A sample counts for its interval, up to this, so waits drop out and a
 * sampler running late on a busy machine is still counted.
 */
const SAMPLE_CAP_US = 4 * SAMPLING_INTERVAL_US;
/** Nodes that are not the proxy's work: the isolate waiting. */
const IDLE = new Set(["(idle)"]);

/** A DevTools protocol session on `url` (ws://…): `send(method, params)` resolves with the result. */
async function inspectorSession(url) {
  const response = await fetch(url.replace(/^ws/, "http"), { headers: { upgrade: "websocket" } });
  const socket = response.webSocket;
  if (!socket) throw new Error(`bench: the inspector at ${url} answered ${response.status}, no WebSocket`);
  socket.accept();
  let nextId = 1;
  const pending = new Map();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(
      typeof event.data === "string" ? event.data : Buffer.from(event.data).toString(),
    );
    const waiting = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (message.error)
      waiting.reject(new Error(`bench: inspector ${waiting.method}: ${message.error.message}`));
    else waiting.resolve(message.result);
  });
  return {
    send(method, params = {}) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject, method });
        socket.send(JSON.stringify({ id, method, params }));
      });
    },
    close: () => socket.close(),
  };
}

/** `{ name, where }` of a profile node's function, named through the bundle's map where it is the bundle's. */
function namer(bundlePath, root) {
  let lookup = null;
  try {
    lookup = sourceMapLookup(JSON.parse(readFileSync(`${bundlePath}.map`, "utf8")), bundlePath, root);
  } catch {
    // No map beside the bundle: functions keep their minified names.
  }
  return ({ functionName, url, lineNumber, columnNumber }) => {
    if (!url) return { name: functionName || "(anonymous)", where: "" };
    const original = lookup && url.endsWith(".js") ? lookup(lineNumber, columnNumber) : null;
    if (!original) return { name: functionName || "(anonymous)", where: `${url}:${lineNumber + 1}` };
    return {
      name: original.name ?? (functionName || "(anonymous)"),
      where: `${original.source}:${original.line}`,
    };
  };
}

/** The `top` heaviest of `timeUs` (key → µs), each with its time per call and share of `busyUs`. */
function ranked(timeUs, busyUs, calls, top) {
  return [...timeUs.entries()]
    .sort(([, a], [, b]) => b - a)
    .slice(0, top)
    .map(([fn, us]) => ({
      function: fn,
      ms_per_call: us / 1000 / calls,
      share: busyUs > 0 ? us / busyUs : 0,
    }));
}

/**
 * The heaviest functions of a V8 CPU profile, with each one's share of the busy (non-idle) time:
 * by self time, and, among the project's own functions (`src/`), by total time (with what they
 * call), which names the stage of a call that costs; and the busy time per call.
 */
export function heaviest(profile, calls, name, top = TOP) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const keyOf = new Map(
    profile.nodes.map((node) => {
      const { name: fn, where } = name(node.callFrame);
      return [node.id, { key: where ? `${fn} ${where}` : fn, own: where.startsWith("src/") }];
    }),
  );
  const selfUs = new Map();
  const totalUs = new Map();
  let busyUs = 0;
  // timeDeltas[i] is the time from sample i − 1 to sample i: sample i ran for timeDeltas[i + 1].
  for (let index = 0; index < profile.samples.length; index++) {
    const spent = Math.min(profile.timeDeltas[index + 1] ?? 0, SAMPLE_CAP_US);
    const node = nodes.get(profile.samples[index]);
    if (!node || IDLE.has(node.callFrame.functionName)) continue;
    busyUs += spent;
    const { key } = keyOf.get(node.id);
    selfUs.set(key, (selfUs.get(key) ?? 0) + spent);
    // Each function on the stack once, however deep it recurses.
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parents.get(id)) {
      const frame = keyOf.get(id);
      if (!frame.own || seen.has(frame.key)) continue;
      seen.add(frame.key);
      totalUs.set(frame.key, (totalUs.get(frame.key) ?? 0) + spent);
    }
  }
  return {
    calls,
    busy_ms_per_call: busyUs / 1000 / calls,
    heaviest: ranked(selfUs, busyUs, calls, top),
    heaviest_total: ranked(totalUs, busyUs, calls, top),
  };
}

/**
 * Profiles the proxy's isolate over three stages of `count` calls each, one after another: reads
 * (one run), replays (of the first writes of a run, written before), and first writes. Resolves
 * with each stage's heaviest functions.
 */
export async function profilePhase(workload, { inspectorUrl, workerName, bundlePath, root, count }) {
  const session = await inspectorSession(`${inspectorUrl.replace(/\/+$/, "")}/core:user:${workerName}`);
  const name = namer(bundlePath, root);
  try {
    await session.send("Profiler.enable");
    await session.send("Profiler.setSamplingInterval", { interval: SAMPLING_INTERVAL_US });
    const readRun = await workload.openRun();
    const writeRun = await workload.openRun();
    // Warm both paths first, so the profiles hold no first call's compilation.
    for (let index = 0; index < 20; index++) await workload.proxiedRead(readRun, index);
    const stages = {
      read: (index) => workload.proxiedRead(readRun, index),
      first_write: (index) => workload.firstWrite(writeRun, index),
      replay: (index) => workload.replay(writeRun, index),
    };
    const figures = {};
    for (const [stage, call] of Object.entries(stages)) {
      await session.send("Profiler.start");
      for (let index = 0; index < count; index++) await call(index);
      const { profile } = await session.send("Profiler.stop");
      figures[stage] = heaviest(profile, count, name);
    }
    return {
      how: `V8's sampling profiler (every ${SAMPLING_INTERVAL_US} µs) on the proxy's isolate, ${count} calls of each stage one after another; self time, functions named through the bundle's source map`,
      stages: figures,
    };
  } finally {
    session.close();
  }
}
