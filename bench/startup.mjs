// What starting the proxy costs: the CPU its module's top level takes (wrangler check startup's CPU
// profile), the wall time from a fresh workerd to its first healthy answer, and its size.
import childProcess from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Miniflare } from "miniflare";
import { moduleSizes } from "../scripts/module-sizes.mjs";
import {
  productionConfig,
  productionMainModule,
  productionSecrets,
  productionWorker,
  withStandInUpstreams,
} from "../scripts/production-worker.mjs";
import { wrangler } from "./build.mjs";
import { send } from "./http.mjs";
import { cpuMs } from "./measure.mjs";
import {
  bindServicesTo,
  HELLO_WORKER,
  helloWorker,
  miniflareOptions,
  proxyWorker,
  urlOf,
  withHelloScript,
  workerdChildren,
} from "./stack.mjs";
import { busyMs, summarise } from "./stats.mjs";

/**
 * `wrangler check startup` on each built upload form of `forms` (name to path), `runs` times, the
 * forms taking turns, so a slow stretch of the machine falls on all of them alike: each run
 * evaluates the module in a local workerd under V8's profiler and writes the profile, which is
 * summed here. A form whose check fails gets its error and is not run again; the others go on.
 */
export function checkStartups(forms, outdir, runs) {
  const busy = Object.fromEntries(Object.keys(forms).map((name) => [name, []]));
  const errors = {};
  for (let run = 0; run < runs; run++) {
    for (const [name, form] of Object.entries(forms)) {
      if (name in errors) continue;
      const outfile = join(outdir, `startup-${name}-${run}.cpuprofile`);
      try {
        wrangler(["check", "startup", "--worker", form, "--outfile", outfile]);
      } catch (error) {
        errors[name] = error instanceof Error ? error.message : String(error);
        continue;
      }
      busy[name].push(busyMs(JSON.parse(readFileSync(outfile, "utf8"))));
    }
  }
  return Object.fromEntries(
    Object.keys(forms).map((name) => [
      name,
      name in errors
        ? { cpu_ms: null, error: errors[name] }
        : { cpu_ms: summarise(busy[name]).p50, runs: busy[name] },
    ]),
  );
}

/**
 * Calls `work` while `spawn` is watched, with a function that says when (on `performance.now()`'s
 * clock) the first workerd process was spawned since, or null. Miniflare looks `spawn` up on the
 * module object at each call, so replacing it there for the call's length sees its workerd start.
 */
async function watchingWorkerdSpawn(work) {
  const original = childProcess.spawn;
  let spawnedAt = null;
  childProcess.spawn = function spawn(command, ...rest) {
    if (spawnedAt === null && /workerd/.test(String(command))) spawnedAt = performance.now();
    return original.call(this, command, ...rest);
  };
  try {
    return await work(() => spawnedAt);
  } finally {
    childProcess.spawn = original;
  }
}

/**
 * A cold start of `worker`: wall time from workerd's spawn to the first 2xx of `path`, and to
 * Miniflare's ready within it (workerd listening); the CPU time workerd had used by that first
 * answer; and, apart, the time from `new Miniflare` to the spawn. That last part is Miniflare
 * building and encoding workerd's config in this process (it grows with the modules' bytes); no
 * deploy pays it, so the start is timed from the spawn, as production's would be from its runtime's.
 */
async function timeToFirstOk(workers, worker, path) {
  const before = new Set(workerdChildren());
  return watchingWorkerdSpawn(async (spawnedAt) => {
    const started = performance.now();
    const mf = new Miniflare(miniflareOptions(workers));
    try {
      await mf.ready;
      const readyAt = performance.now();
      const url = `${await urlOf(mf, worker)}${path}`;
      const response = await send(url);
      if (response.status < 200 || response.status >= 300) {
        throw new Error(`bench: ${path} of a fresh ${worker} answered ${response.status}`);
      }
      const firstAt = performance.now();
      const spawned = spawnedAt();
      if (spawned === null) throw new Error(`bench: no workerd spawn was seen for a fresh ${worker}`);
      const [pid] = workerdChildren().filter((child) => !before.has(child));
      return {
        config: spawned - started,
        ready: readyAt - spawned,
        first: firstAt - spawned,
        cpu: pid === undefined ? null : cpuMs(pid),
      };
    } finally {
      await mf.dispose();
    }
  });
}

/**
 * The production build (the split build's modules in `bundles.production`) as production is
 * configured: the vars, Durable Objects and KV of `[env.production]` in the wrangler.toml of the
 * tree it was built from, and the secrets of its template with their demo values
 * (scripts/production-worker.mjs, as scripts/test-production-bundle.mjs boots it). Its upstream URLs
 * are stand-ins the start-up check accepts, and anything it fetches goes to the hello Worker: a
 * /healthz calls no upstream, and nothing leaves 127.0.0.1.
 */
function productionProxyWorker(bundles) {
  const config = productionConfig(bundles.root);
  const bindings = {
    ...withStandInUpstreams(config.vars, "bench.internal"),
    ...productionSecrets(bundles.root),
  };
  return { ...productionWorker(config, bundles.production, bindings), outboundService: HELLO_WORKER };
}

/**
 * Cold starts, `runs` of each, interleaved: the production build (its main module, the chunks
 * beside it) to its first GET /healthz 200; the sandbox build the bench serves (one module, its
 * service bindings answered by the hello Worker) to its first; the hello script given each build's
 * bindings (what Miniflare and workerd set up for its Durable Objects, KV and the rest); the hello
 * Worker alone. A build's start less its bindings' is what its module adds. Medians, in
 * milliseconds, of the time from workerd's spawn to the first answer and to Miniflare's ready within
 * it, and of workerd's CPU time until then; beside them, Miniflare's config time before the spawn
 * (`*_config_ms`), which no start counts. The sandbox build's figures keep the names they had before
 * the production build was measured (proxy_*, bindings_only_*), so older reports read the same.
 */
export async function coldStarts(bundles, runs) {
  const proxy = bindServicesTo(proxyWorker(bundles), HELLO_WORKER);
  const production = productionProxyWorker(bundles);
  const hello = helloWorker(proxy.compatibilityDate);
  const starts = { production: [], production_bindings: [], proxy: [], bindings: [], hello: [] };
  for (let run = 0; run < runs; run++) {
    starts.production.push(await timeToFirstOk([production, hello], production.name, "/healthz"));
    starts.production_bindings.push(
      await timeToFirstOk([withHelloScript(production), hello], production.name, "/"),
    );
    starts.proxy.push(await timeToFirstOk([proxy, hello], proxy.name, "/healthz"));
    starts.bindings.push(await timeToFirstOk([withHelloScript(proxy), hello], proxy.name, "/"));
    starts.hello.push(await timeToFirstOk([hello], HELLO_WORKER, "/"));
  }
  const p50 = (name, field) => summarise(starts[name].map((start) => start[field])).p50;
  return {
    production_healthz_ms: p50("production", "first"),
    // Before the spawn, in this process: Miniflare's config for workerd, not part of the start.
    production_config_ms: p50("production", "config"),
    hello_config_ms: p50("hello", "config"),
    production_ready_ms: p50("production", "ready"),
    production_workerd_cpu_ms: p50("production", "cpu"),
    production_bindings_only_ms: p50("production_bindings", "first"),
    production_bindings_only_workerd_cpu_ms: p50("production_bindings", "cpu"),
    production_added_by_module_ms: p50("production", "first") - p50("production_bindings", "first"),
    production_cpu_added_by_module_ms: p50("production", "cpu") - p50("production_bindings", "cpu"),
    proxy_healthz_ms: p50("proxy", "first"),
    proxy_ready_ms: p50("proxy", "ready"),
    bindings_only_ms: p50("bindings", "first"),
    hello_ms: p50("hello", "first"),
    added_by_module_ms: p50("proxy", "first") - p50("bindings", "first"),
    proxy_workerd_cpu_ms: p50("proxy", "cpu"),
    bindings_only_workerd_cpu_ms: p50("bindings", "cpu"),
    cpu_added_by_module_ms: p50("proxy", "cpu") - p50("bindings", "cpu"),
    runs: starts,
  };
}

/** Sizes of the built modules, raw and gzipped, in KiB. */
export function bundleSizes(bundles) {
  const sizeOf = (path) => {
    const bytes = readFileSync(path);
    return { kib: bytes.length / 1024, gzip_kib: gzipSync(bytes).length / 1024 };
  };
  // What an isolate evaluates at startup is the main module and its static imports; the chunks
  // loaded on first use are counted in `total` only.
  const { startup, total } = moduleSizes(bundles.production, productionMainModule(bundles.production));
  const kib = (sizes) => ({ modules: sizes.modules, kib: sizes.raw / 1024, gzip_kib: sizes.gzip / 1024 });
  return {
    proxy: kib(startup),
    production_total: kib(total),
    sandbox_proxy: sizeOf(bundles.proxy),
    sandbox: sizeOf(bundles.sandbox),
  };
}
