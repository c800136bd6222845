// The Workers under measurement, served by workerd through the Miniflare API: the built proxy, its
// built sandbox upstream and a hello Worker as the runtime's floor. One workerd process holds them
// all, so the proxy's service bindings and Durable Objects stay in-process as on Cloudflare; each
// Worker also gets a socket of its own on loopback, so no request passes Miniflare's entry Worker.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";
import { root } from "../scripts/local-stack.mjs";
import { readDevVars } from "../scripts/production-worker.mjs";
import { FLOOR_WORKER, floorWorker } from "./floor.mjs";
import { closeConnections, okJson, send } from "./http.mjs";
import { BENCH_AGENT_KEY, BENCH_PROFILE, RUN_LIMITS } from "./workload.mjs";

export const HELLO_WORKER = "bench-hello";
const HELLO_SCRIPT = 'export default { fetch() { return new Response("ok") } }';

/**
 * A Worker as wrangler would run its config's sandbox environment (every binding it declares: Durable
 * Objects, service bindings, KV, Analytics Engine, rate limits, ...), serving the built `scriptPath`,
 * with the demo secrets of the committed `.dev.vars.example` rather than whatever a local .dev.vars holds.
 */
function workerFromConfig(folder, scriptPath, from = root) {
  const config = unstable_readConfig(
    { config: join(from, folder, "wrangler.toml"), env: "sandbox" },
    { hideWarnings: true },
  );
  // Wrangler announces the .dev.vars it reads; the bench replaces those values anyway.
  const logLevel = process.env.WRANGLER_LOG;
  process.env.WRANGLER_LOG = "error";
  let workerOptions;
  try {
    ({ workerOptions } = unstable_getMiniflareWorkerOptions(config, "sandbox"));
  } finally {
    if (logLevel === undefined) delete process.env.WRANGLER_LOG;
    else process.env.WRANGLER_LOG = logLevel;
  }
  return {
    ...workerOptions,
    name: config.name,
    compatibilityDate: config.compatibility_date,
    // The module itself, as wrangler check startup hands it over: given `modules: true` and a path,
    // Miniflare would first parse the whole bundle in Node to find its imports (a bundle has none).
    modules: [{ type: "ESModule", path: scriptPath, contents: readFileSync(scriptPath) }],
    // Module names are paths relative to this root, and a bundle in a temporary folder lies outside the project.
    modulesRoot: dirname(scriptPath),
    bindings: { ...config.vars, ...readDevVars(join(from, folder, ".dev.vars.example")) },
  };
}

/**
 * The built proxy with every binding of wrangler.toml's sandbox environment (of the tree it was
 * built from), and an agent profile `bench` of tenant initech with its key, for MCP session calls.
 */
export const proxyWorker = (bundles) => withBenchAgent(workerFromConfig(".", bundles.proxy, bundles.root));

/** The built sandbox upstream, named as the proxy's service bindings name it. */
export const sandboxWorker = (bundles) => workerFromConfig("sandbox", bundles.sandbox, bundles.root);

/** `worker` with initech's `bench` agent profile in TENANTS and its key's hash in AGENT_KEYS. */
function withBenchAgent(worker) {
  const parse = (value) => (typeof value === "string" ? JSON.parse(value) : (value ?? {}));
  const tenants = parse(worker.bindings.TENANTS);
  const agentKeys = parse(worker.bindings.AGENT_KEYS);
  const profile = { namespace: "support", limits: RUN_LIMITS };
  tenants.initech = {
    ...tenants.initech,
    agent_profiles: { ...tenants.initech?.agent_profiles, [BENCH_PROFILE]: profile },
  };
  const hash = createHash("sha256").update(BENCH_AGENT_KEY).digest("hex");
  agentKeys.initech = { ...agentKeys.initech, [BENCH_PROFILE]: [hash] };
  return {
    ...worker,
    bindings: { ...worker.bindings, TENANTS: tenants, AGENT_KEYS: JSON.stringify(agentKeys) },
  };
}

/** A Worker that does nothing but answer: what any request costs before the proxy does anything. */
export const helloWorker = (compatibilityDate) => ({
  name: HELLO_WORKER,
  modules: true,
  script: HELLO_SCRIPT,
  compatibilityDate,
});

/**
 * `worker`'s bindings around the hello script, with an empty class for each of its Durable Objects:
 * what a start costs before the module's own code runs.
 */
export function withHelloScript(worker) {
  const classes = [...new Set(Object.values(worker.durableObjects ?? {}).map(({ className }) => className))];
  const { modules: _built, modulesRoot: _root, ...options } = worker;
  return {
    ...options,
    modules: true,
    script: [HELLO_SCRIPT, ...classes.map((name) => `export class ${name} {}`)].join("\n"),
  };
}

/** Points every service binding of `worker` at `target`: the proxy alone, with a stub behind it. */
export function bindServicesTo(worker, target) {
  const serviceBindings = Object.fromEntries(
    Object.keys(worker.serviceBindings ?? {}).map((binding) => [binding, { name: target }]),
  );
  return { ...worker, serviceBindings };
}

/**
 * Miniflare's options for `workers`, each with its own loopback socket. workerd's own output is
 * kept (the last lines) rather than printed, and shown when something fails.
 */
export function miniflareOptions(workers, runtimeOutput = [], persistRoot = undefined, inspector = false) {
  const keep = (stream) =>
    stream.on("data", (chunk) => {
      runtimeOutput.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      runtimeOutput.splice(0, Math.max(0, runtimeOutput.length - 40));
    });
  return {
    host: "127.0.0.1",
    port: 0,
    // No request.cf: Miniflare would otherwise download it from Cloudflare.
    cf: false,
    // Where Durable Objects and KV keep their SQLite files; by default a folder of the OS's temp dir.
    ...(persistRoot ? { defaultPersistRoot: persistRoot } : {}),
    // The profile phase drives V8's profiler through workerd's inspector, on a port of its own.
    ...(inspector ? { inspectorPort: 0 } : {}),
    handleRuntimeStdio: (stdout, stderr) => {
      keep(stdout);
      keep(stderr);
    },
    workers: workers.map((worker) => ({ ...worker, unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }] })),
  };
}

/** The loopback URL of `worker`'s own socket, without a trailing slash. */
export async function urlOf(mf, worker) {
  return (await mf.unsafeGetDirectURL(worker)).toString().replace(/\/+$/, "");
}

/** Ids of the workerd processes this Node process started (Miniflare spawns workerd directly). */
export function workerdChildren() {
  const children = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (comm === "workerd" && ppid === process.pid) children.push(Number(entry));
    } catch {
      // the process ended while the folder was listed
    }
  }
  return children;
}

/** The one workerd child process started since `before` was listed. */
function newWorkerd(before) {
  const started = workerdChildren().filter((pid) => !before.has(pid));
  if (started.length !== 1) {
    throw new Error(`bench: expected one new workerd child process, found ${started.length}`);
  }
  return started[0];
}

/**
 * Starts the proxy, the sandbox, the hello Worker and the floor worker in one workerd, their
 * storage under `persistRoot` when given (and workerd's inspector on a port of its own when
 * `inspector`). Resolves with each one's URL, the workerd process id (for
 * its CPU time), the secrets the proxy was given, and `restart()`: a new workerd on the same
 * storage, so every Durable Object is out of memory at its next request (URLs and pid follow).
 */
export async function startStack(bundles, { persistRoot, inspector = false } = {}) {
  const proxy = proxyWorker(bundles);
  const sandbox = sandboxWorker(bundles);
  const hello = helloWorker(proxy.compatibilityDate);
  const floor = floorWorker(proxy.compatibilityDate, HELLO_WORKER);
  const runtimeOutput = [];
  const options = miniflareOptions([proxy, sandbox, hello, floor], runtimeOutput, persistRoot, inspector);
  let before = new Set(workerdChildren());
  const mf = new Miniflare(options);
  try {
    await mf.ready;
    const stack = {
      mf,
      urls: {},
      workerdPid: 0,
      secrets: proxy.bindings,
      runtimeOutput,
      proxyName: proxy.name,
      inspectorUrl: inspector ? (await mf.getInspectorURL()).toString() : null,
    };
    const locate = async () => {
      stack.urls = {
        proxy: await urlOf(mf, proxy.name),
        sandbox: await urlOf(mf, sandbox.name),
        hello: await urlOf(mf, HELLO_WORKER),
        floor: await urlOf(mf, FLOOR_WORKER),
      };
      stack.workerdPid = newWorkerd(before);
    };
    await locate();
    stack.restart = async () => {
      closeConnections();
      before = new Set(workerdChildren().filter((pid) => pid !== stack.workerdPid));
      await mf.setOptions(options);
      await locate();
    };
    return stack;
  } catch (error) {
    await mf.dispose().catch(() => {});
    throw new Error(`bench: workerd did not start the Workers: ${error}\n${runtimeOutput.join("\n")}`);
  }
}

/**
 * Starts the stack, checks that the proxy is up, and measures it with `use`; whatever happens, the
 * client's connections are closed and workerd is stopped, and a failure prints workerd's last output.
 */
export async function onStack(bundles, options, use) {
  const stack = await startStack(bundles, options);
  try {
    okJson("GET /healthz of the proxy", await send(`${stack.urls.proxy}/healthz`));
    return await use(stack);
  } catch (error) {
    if (stack.runtimeOutput.length > 0)
      console.error(`workerd's last output:\n${stack.runtimeOutput.join("\n")}`);
    const alive = workerdChildren().includes(stack.workerdPid);
    console.error(
      `workerd (pid ${stack.workerdPid}) ${alive ? "was still running" : "had exited"} when the bench failed`,
    );
    throw error;
  } finally {
    closeConnections();
    await stack.mf.dispose();
  }
}
