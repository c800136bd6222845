// Tests the artifact a production deploy ships, not the source: builds it the way
// `wrangler deploy --env production` would (a dry run to dist/production), then boots exactly those
// modules in Miniflare, the pinned one (package.json), from Node. The proxy gets only what production
// gives it: the vars, Durable Objects and KV of `[env.production]` in wrangler.toml, and the secrets
// the template of docs/deploying.md (secrets.production.example.json) names, filled with the demo values of
// .dev.vars.example. Its URL upstreams (wrangler.toml's placeholders replaced by stand-in URLs) are
// answered by the sandbox upstream's bundle (dist/sandbox/index.js, `npm run build:sandbox`) in the same Miniflare:
// every fetch the proxy makes goes to a Node handler that passes the API hosts to the sandbox
// and refuses any other. Nothing leaves 127.0.0.1.
//
//   node scripts/test-production-bundle.mjs [--skip-build]
//
// Asserts: what starts with the isolate is at most 200 KiB gzipped (the chunks loaded on first use
// apart); the parts loaded on first use answer from their chunks; /healthz answers 200 naming production; a run
// opens for acme; a read goes through; a refund waits for a human, an operator approves it through
// the API, and the sandbox's admin API shows the refund, once; without a secret, and with the
// shipped placeholder upstream URLs, it answers 503 naming what to set.
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Miniflare } from "miniflare";
import { unstable_readConfig as readConfig } from "wrangler";
import { root } from "./local-stack.mjs";
import { moduleSizes } from "./module-sizes.mjs";
import { offlineEnv } from "./offline-env.mjs";
import {
  durableObjectsOf,
  productionConfig,
  productionSecrets,
  productionWorker,
  readDevVars,
  urlVarsOf,
  withStandInUpstreams,
} from "./production-worker.mjs";

// A budget, not a platform limit (Workers allow megabytes): what the isolate evaluates when it
// starts, the main module and the chunks it imports statically (scripts/module-sizes.mjs), gzipped
// module by module. scripts/build-worker.mjs splits the build: what is imported dynamically on first
// use (src/http/lazy.ts: MCP, console, docs, operator routes; src/oauth/entry.ts: the OAuth
// provider) is uploaded as chunks beside the main module and is not in this figure; the total of
// every uploaded module is printed beside it.
// History of the single bundle this replaced (everything in one module): 240 KiB until federated
// MCP tools (the SDK's client package bundles its own copy of the protocol core the server package
// already brings, about 60 KiB gzipped); 300 KiB until effects across runs (8 KiB); 310 KiB until
// MCP 2026-07-28 (15 KiB); 325 KiB until governance (10 KiB); 340 KiB until approve with edit, free
// polls, the production placeholder check and hono/secure-headers (4 KiB); 350 KiB and 347.6 KiB
// until the split, which left 165.5 KiB at startup (the MCP server and client SDKs, the OAuth
// provider, the console, the docs and OpenAPI, the operator routes moved to chunks: 379 KiB in all).
const MAX_GZIP_BYTES = 200 * 1024;
const OUTDIR = join(root, "dist", "production");
// The main module scripts/build-worker.mjs writes; the dry run copies it and its chunks to OUTDIR.
const MAIN_MODULE = "index.mjs";
const SANDBOX_BUNDLE = join(root, "dist", "sandbox", "index.js");
// Demo credentials of .dev.vars.example (README.md, Quick start); valid only here.
const TENANT_KEY = "acme-demo-key";
const OPERATOR_KEY = "acme-operator-key";

const { values: opts } = parseArgs({ options: { "skip-build": { type: "boolean", default: false } } });

let failures = 0;
function check(ok, what, detail = "") {
  console.log(`${ok ? "ok" : "FAIL"}  ${what}${!ok && detail ? `\n      ${detail}` : ""}`);
  if (!ok) failures++;
  return ok;
}

/** Fails the whole script at once: nothing after it can be checked. */
function fatal(message) {
  console.error(`test-production-bundle: ${message}`);
  process.exit(1);
}

function run(command, args) {
  const result = spawnSync(command, args, {
    cwd: root,
    // No banner: its update check is the one request wrangler would still send off this machine.
    env: { ...offlineEnv, WRANGLER_HIDE_BANNER: "true" },
    encoding: "utf8",
    shell: process.platform === "win32",
  });
  if (result.status !== 0)
    fatal(`${command} ${args.join(" ")} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

// 1. The artifact: wrangler's own bundler, minified as configured, no network.
if (!opts["skip-build"]) {
  // The dry run adds to its outdir: an earlier build's modules would be counted as uploaded.
  rmSync(OUTDIR, { recursive: true, force: true });
  run("npx", ["wrangler", "deploy", "--dry-run", "--env", "production", "--outdir", OUTDIR]);
  if (!existsSync(SANDBOX_BUNDLE)) run(process.execPath, [join(root, "scripts", "build-sandbox.mjs")]);
}
const bundlePath = join(OUTDIR, MAIN_MODULE);
if (!existsSync(bundlePath)) fatal(`${bundlePath} is missing: run without --skip-build`);
if (!existsSync(SANDBOX_BUNDLE)) fatal(`${SANDBOX_BUNDLE} is missing: run npm run build:sandbox`);

const { startup, total } = moduleSizes(OUTDIR, MAIN_MODULE);
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
check(
  startup.gzip <= MAX_GZIP_BYTES,
  `main module and its static imports: ${startup.modules} modules, ${kib(startup.raw)}, ${kib(startup.gzip)} gzipped (limit ${kib(MAX_GZIP_BYTES)}); ` +
    `all modules uploaded: ${total.modules}, ${kib(total.raw)}, ${kib(total.gzip)} gzipped`,
  "what the isolate evaluates at startup grew past the budget: see what grew with `node scripts/build-worker.mjs --outdir dist/size --metafile` (dist/size/meta.json)",
);

// 2. What production gives the Worker, read from wrangler.toml by the pinned wrangler.
const config = productionConfig();
const vars = config.vars;
if (vars.ENVIRONMENT !== "production") fatal('[env.production.vars] must set ENVIRONMENT = "production"');
// The tools' upstreams, the vars holding an https URL, set to stand-ins as a deployer sets the real
// APIs' URLs (scripts/production-worker.mjs), answered below.
const urlVars = urlVarsOf(vars);
const deployedVars = withStandInUpstreams(vars, "bundle-test.internal");
const apiHosts = new Set(
  Object.values(deployedVars)
    .filter((value) => typeof value === "string" && /^https:\/\//.test(value))
    .map((value) => new URL(value).host),
);
check(apiHosts.size > 0, `production binds its tools by URL: ${[...apiHosts].join(", ")}`);

// The sandbox upstream as its own config declares it (name, compatibility date, Durable Object).
const upstreamConfig = readConfig(
  { config: join(root, "sandbox", "wrangler.toml"), env: "sandbox" },
  { hideWarnings: true },
);
const SANDBOX_WORKER = upstreamConfig.name;

// 3. Only the secrets docs/deploying.md tells an operator to set, with demo values.
let secrets;
try {
  secrets = productionSecrets();
} catch (error) {
  fatal(error instanceof Error ? error.message : String(error));
}

// 4. The artifact and its upstream in one Miniflare, on loopback.
const outbound = { allowed: [], refused: [] };
/** The Miniflare options: the artifact given `proxySecrets` and `proxyVars`, and the sandbox upstream. */
const options = (proxySecrets, proxyVars = deployedVars) => ({
  host: "127.0.0.1",
  port: 0,
  cf: false,
  workers: [
    {
      ...productionWorker(config, OUTDIR, { ...proxyVars, ...proxySecrets }),
      // Every fetch the Worker makes: the API hosts reach the sandbox, anything else is refused.
      outboundService: async (request) => {
        const url = new URL(request.url);
        if (!apiHosts.has(url.host)) {
          outbound.refused.push(url.href);
          return new Response("not an upstream of this test", { status: 502 });
        }
        outbound.allowed.push(`${request.method} ${url.host}${url.pathname}`);
        const upstream = await mf.getWorker(SANDBOX_WORKER);
        const body = ["GET", "HEAD"].includes(request.method) ? undefined : await request.arrayBuffer();
        return upstream.fetch(url.href, { method: request.method, headers: request.headers, body });
      },
    },
    {
      name: SANDBOX_WORKER,
      modules: true,
      scriptPath: SANDBOX_BUNDLE,
      compatibilityDate: upstreamConfig.compatibility_date,
      compatibilityFlags: upstreamConfig.compatibility_flags,
      durableObjects: durableObjectsOf(upstreamConfig),
      bindings: readDevVars(join(root, "sandbox", ".dev.vars.example")),
    },
  ],
});
const mf = new Miniflare(options(secrets));

const sandboxAdminToken = readDevVars(join(root, "sandbox", ".dev.vars.example")).SANDBOX_ADMIN_TOKEN;

try {
  const base = (await mf.ready).toString().replace(/\/+$/, "");
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(base))
    throw new Error(`Miniflare listens on ${base}, not on loopback`);

  async function call(method, path, token, body) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      // shown by the failing check
    }
    return { status: response.status, json, text: text.slice(0, 600) };
  }

  async function sandboxAdmin(path) {
    const upstream = await mf.getWorker(SANDBOX_WORKER);
    const response = await upstream.fetch(`http://sandbox.internal${path}`, {
      headers: { "x-sandbox-admin": sandboxAdminToken },
    });
    return response.json();
  }

  const health = await call("GET", "/healthz");
  check(
    health.status === 200 && health.json?.data?.environment === "production",
    "GET /healthz answers 200, environment production",
    `${health.status} ${health.text}`,
  );

  // Parts loaded on first use answer from their chunks: the API docs and the OAuth provider.
  const openapi = await call("GET", "/openapi.json");
  check(
    openapi.status === 200 && typeof openapi.json?.openapi === "string",
    "GET /openapi.json answers the OpenAPI document (a chunk loaded on first use)",
    `${openapi.status} ${openapi.text}`,
  );
  const metadata = await call("GET", "/.well-known/oauth-authorization-server");
  check(
    metadata.status === 200 && typeof metadata.json?.token_endpoint === "string",
    "GET /.well-known/oauth-authorization-server answers from the OAuth provider (a chunk loaded on first use)",
    `${metadata.status} ${metadata.text}`,
  );

  const opened = await call("POST", "/v1/runs", TENANT_KEY, { namespace: "support" });
  const runId = opened.json?.data?.run_id;
  const runToken = opened.json?.data?.run_token;
  if (
    !check(opened.status === 201 && runId && runToken, "acme opens a run", `${opened.status} ${opened.text}`)
  )
    throw new Error("no run to test with");
  check(opened.json.environment === "production", "the run's envelope names production");

  // And the MCP server: the run's token opens a session (its SDK is the largest chunk).
  const initialized = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${runToken}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "bundle-test", version: "1" },
      },
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const initializedText = await initialized.text();
  check(
    initialized.status === 200 && initializedText.includes('"serverInfo"'),
    "POST /mcp initialize opens a session with the run token (a chunk loaded on first use)",
    `${initialized.status} ${initializedText.slice(0, 600)}`,
  );

  const read = await call("POST", `/v1/runs/${runId}/calls`, runToken, {
    tool: "lookup_order",
    args: { order_id: "A1001" },
  });
  check(
    read.status === 200 && read.json?.outcome === "success" && read.json?.data?.order_id === "A1001",
    "lookup_order A1001 reaches the upstream by URL and succeeds",
    `${read.status} ${read.text}`,
  );

  const refund = {
    tool: "issue_refund",
    args: { order_id: "A1001", amount_cents: 500, reason: "user_cancel" },
  };
  const asked = await call("POST", `/v1/runs/${runId}/calls`, runToken, refund);
  const approvalId = asked.json?.approval?.id;
  check(
    asked.json?.error?.code === "approval_required" && approvalId,
    "issue_refund waits for a human (approval_required)",
    `${asked.status} ${asked.text}`,
  );
  const before = await sandboxAdmin("/_admin/refunds?order_id=A1001");
  check(
    before.refunds?.length === 0,
    "no refund exists upstream before the approval",
    JSON.stringify(before),
  );

  const approved = await call("POST", `/v1/approvals/${approvalId}/approve`, OPERATOR_KEY, {
    reason: "production bundle test",
  });
  check(
    approved.status === 200 && approved.json?.outcome === "success",
    "the operator approves through the API and the refund executes",
    `${approved.status} ${approved.text}`,
  );
  const after = await sandboxAdmin("/_admin/refunds?order_id=A1001");
  check(
    after.refunds?.length === 1 && after.refunds[0].amount_cents === 500 && after.refunds[0].run_id === runId,
    "the sandbox's admin API shows exactly that refund, tagged with the run",
    JSON.stringify(after),
  );

  const replay = await call("POST", `/v1/runs/${runId}/calls`, runToken, refund);
  check(
    replay.json?.outcome === "success" && replay.json?.replayed === true,
    "the agent's identical call gets the executed refund as a replay",
    `${replay.status} ${replay.text}`,
  );

  check(
    outbound.allowed.some((line) => line.startsWith("GET ")) &&
      outbound.allowed.some((line) => line.startsWith("POST ")),
    `the proxy's fetches went to its URL upstreams (${outbound.allowed.length}: ${[...new Set(outbound.allowed.map((line) => line.split(" ")[1].split("/")[0]))].join(", ")})`,
  );
  check(outbound.refused.length === 0, "no fetch to any other host", outbound.refused.join(", "));

  // The same artifact deployed without one of the secrets refuses, naming it.
  const [forgotten, ...kept] = Object.keys(secrets);
  await mf.setOptions(options(Object.fromEntries(kept.map((name) => [name, secrets[name]]))));
  const unready = await call("GET", "/healthz");
  check(
    unready.status === 503 &&
      unready.json?.error?.code === "internal_error" &&
      unready.json?.error?.recommended_next_action === "escalate_to_human" &&
      unready.json?.error?.message?.includes(`secret ${forgotten} is not set`) &&
      unready.json?.error?.message?.includes("wrangler secret bulk"),
    `without ${forgotten}, GET /healthz answers 503 naming it and how to set it`,
    `${unready.status} ${unready.text}`,
  );

  // The same artifact with wrangler.toml's production vars as shipped: each placeholder URL named.
  await mf.setOptions(options(secrets, vars));
  const placeholders = await call("GET", "/healthz");
  const message = placeholders.json?.error?.message ?? "";
  check(
    placeholders.status === 503 &&
      placeholders.json?.error?.code === "internal_error" &&
      urlVars.every(([name, value]) => message.includes(`${name} is "${value}"`)) &&
      message.includes("example.com is reserved for documentation") &&
      message.includes("[env.production.vars] in wrangler.toml"),
    `with the shipped placeholder URLs, GET /healthz answers 503 naming ${urlVars.map(([name]) => name).join(", ")}`,
    `${placeholders.status} ${placeholders.text}`,
  );
} catch (error) {
  check(
    false,
    "the production bundle test ran to the end",
    error instanceof Error ? error.stack : String(error),
  );
} finally {
  await mf.dispose();
}

if (failures > 0) fatal(`${failures} check(s) failed`);
console.log("test-production-bundle: the production bundle works");
