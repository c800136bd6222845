// `npm run bench`: the proxy's overhead and its ledger's throughput, measured on loopback.
//
// Two local workerd processes: the proxy with its sandbox upstream (as `npm start` runs them), and a
// second copy of the sandbox alone, called directly with a minted upstream credential. The same read
// is timed both ways at concurrency 1; the difference is what the proxy adds.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root, startWrangler } from "../scripts/local-stack.mjs";
import { mintUpstreamCredential } from "./credential.mjs";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 400);
const WARMUP = 50;
const THROUGHPUT_MS = 4_000;
const CONCURRENCY = 16;
const PROXY_PORT = 8801;
const SANDBOX_PORT = 8802;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summarise(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}

async function timed(fn) {
  const started = performance.now();
  const response = await fn();
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`benchmark request failed with ${response.status}`);
  return performance.now() - started;
}

async function series(label, count, fn) {
  const samples = [];
  for (let index = 0; index < count; index++) samples.push(await timed(() => fn(index)));
  process.stdout.write(`  measured ${label} (${count} samples)\n`);
  return summarise(samples);
}

async function main() {
  console.log("bench: starting the proxy + sandbox and a direct sandbox on loopback ...");
  const proxy = await startWrangler({
    configs: ["wrangler.toml", "sandbox/wrangler.toml"],
    port: PROXY_PORT,
    readyPath: "/healthz",
  });
  const direct = await startWrangler({ configs: ["sandbox/wrangler.toml"], port: SANDBOX_PORT });
  try {
    const opened = await fetch(`${proxy.url}/v1/runs`, {
      method: "POST",
      headers: { authorization: "Bearer initech-demo-key", "content-type": "application/json" },
      body: JSON.stringify({
        namespace: "support",
        limits: { max_calls: 10000, max_writes: 1000, deadline_s: 3600 },
      }),
    }).then((response) => response.json());
    const { run_id: runId, run_token: token } = opened.data;
    const call = (tool, args) =>
      fetch(`${proxy.url}/v1/runs/${runId}/calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ tool, args }),
      });
    const credential = await mintUpstreamCredential({
      tenant: "initech",
      run: "bench-direct",
      tool: "lookup_order",
      exp: Date.now() + 3_600_000,
    });
    const orderId = (index) => `I${3001 + (index % 20)}`;
    const directRead = (index) =>
      fetch(`${direct.url}/orders/${orderId(index)}`, { headers: { authorization: `Bearer ${credential}` } });
    const proxiedRead = (index) => call("lookup_order", { order_id: orderId(index) });

    for (let index = 0; index < WARMUP; index++) {
      await (await directRead(index)).arrayBuffer();
      await (await proxiedRead(index)).arrayBuffer();
    }

    console.log("bench: latency at concurrency 1");
    // Interleave the two reads so drift on a noisy machine hits both equally.
    const directSamples = [];
    const proxiedSamples = [];
    for (let index = 0; index < SAMPLES; index++) {
      directSamples.push(await timed(() => directRead(index)));
      proxiedSamples.push(await timed(() => proxiedRead(index)));
    }
    const directRead50 = summarise(directSamples);
    const proxiedRead50 = summarise(proxiedSamples);
    const ticket = (index) => ({
      customer_id: "C300",
      priority: "low",
      summary: `Benchmark ticket number ${index} for the ledger.`,
    });
    const firstWrite = await series("first write (create_internal_ticket)", 200, (index) =>
      call("create_internal_ticket", ticket(index)),
    );
    const replay = await series("idempotent replay", 200, (index) =>
      call("create_internal_ticket", ticket(index)),
    );

    console.log(
      `bench: throughput of one run's ledger (${CONCURRENCY} concurrent callers, ${THROUGHPUT_MS} ms each)`,
    );
    const throughput = async (fn) => {
      let done = 0;
      const until = performance.now() + THROUGHPUT_MS;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, worker) => {
          let index = worker;
          while (performance.now() < until) {
            await (await fn(index)).arrayBuffer();
            done++;
            index += CONCURRENCY;
          }
        }),
      );
      return Math.round((done * 1000) / THROUGHPUT_MS);
    };
    const readsPerSecond = await throughput(proxiedRead);
    const replaysPerSecond = await throughput((index) => call("create_internal_ticket", ticket(index % 200)));

    const report = {
      measured_at: new Date().toISOString(),
      samples: SAMPLES,
      read_direct_ms: directRead50,
      read_via_proxy_ms: proxiedRead50,
      added_ms: { p50: proxiedRead50.p50 - directRead50.p50, p99: proxiedRead50.p99 - directRead50.p99 },
      first_write_ms: firstWrite,
      replay_ms: replay,
      ledger_throughput_per_s: { reads: readsPerSecond, replays: replaysPerSecond },
    };
    const fmt = (value) => value.toFixed(2).padStart(8);
    console.log("\n| measurement                  |   p50 ms |   p99 ms |");
    console.log("|------------------------------|----------|----------|");
    console.log(`| read, direct to sandbox      | ${fmt(directRead50.p50)} | ${fmt(directRead50.p99)} |`);
    console.log(`| read, through the proxy      | ${fmt(proxiedRead50.p50)} | ${fmt(proxiedRead50.p99)} |`);
    console.log(
      `| added by the proxy           | ${fmt(report.added_ms.p50)} | ${fmt(report.added_ms.p99)} |`,
    );
    console.log(`| first write (ticket)         | ${fmt(firstWrite.p50)} | ${fmt(firstWrite.p99)} |`);
    console.log(`| idempotent replay            | ${fmt(replay.p50)} | ${fmt(replay.p99)} |`);
    console.log(`\nledger throughput, one run: ${readsPerSecond} reads/s, ${replaysPerSecond} replays/s`);
    mkdirSync(join(root, "reports"), { recursive: true });
    writeFileSync(join(root, "reports", "bench.json"), `${JSON.stringify(report, null, 2)}\n`);
    console.log("bench: wrote reports/bench.json");
  } finally {
    proxy.stop();
    direct.stop();
  }
}

/** `npm run bench -- --abuse`: one tenant floods, another keeps working; on a proxy of its own. */
async function abuse() {
  console.log("bench: starting the proxy + sandbox on loopback for the abuse load test ...");
  const proxy = await startWrangler({
    configs: ["wrangler.toml", "sandbox/wrangler.toml"],
    port: 8803,
    readyPath: "/healthz",
  });
  try {
    const passThrough = process.argv.slice(2).filter((arg) => arg !== "--abuse");
    const result = spawnSync(
      process.execPath,
      [join(root, "scripts", "bench-abuse.mjs"), "--url", proxy.url, "--control", ...passThrough],
      {
        stdio: "inherit",
      },
    );
    return result.status ?? 1;
  } finally {
    proxy.stop();
  }
}

if (process.argv.includes("--abuse")) {
  process.exit(await abuse());
}
await main();
process.exit(0);
