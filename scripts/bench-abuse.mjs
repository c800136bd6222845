// Abuse benchmark: one tenant floods the proxy while another makes ordinary calls. Prints the
// victim's latency (p50/p90/p99) and success rate without and with the flood, and what the flood got.
//
// Against a running local proxy (loopback only):
//   node scripts/build-sandbox.mjs
//   npx wrangler dev -c wrangler.toml -c sandbox/wrangler.toml --env sandbox --ip 127.0.0.1 --port 8787
//   node scripts/bench-abuse.mjs [--url http://127.0.0.1:8787] [--seconds 10] [--flood-concurrency 64]
//                                [--rate 20] [--control] [--json]
//
// --control adds a third phase: the same load on GET /healthz, which no limiter or Durable Object
// serves. Locally every worker and object shares one workerd process, so the victim's latency
// under any flood is mostly that process's CPU; the control shows how much.
//
// Bounded: each phase lasts --seconds (at most 60), the flood sends at most --max-flood requests,
// the victim at most --rate calls per second. Nothing leaves 127.0.0.1.
import http from "node:http";
import { parseArgs } from "node:util";

const { values: opts } = parseArgs({
  options: {
    url: { type: "string", default: "http://127.0.0.1:8787" },
    seconds: { type: "string", default: "10" },
    rate: { type: "string", default: "20" },
    "flood-concurrency": { type: "string", default: "64" },
    "max-flood": { type: "string", default: "200000" },
    "victim-key": { type: "string", default: "acme-demo-key" },
    "flooder-key": { type: "string", default: "umbrella-demo-key" },
    json: { type: "boolean", default: false },
    control: { type: "boolean", default: false },
    abuse: { type: "boolean", default: false }, // accepted so `npm run bench -- --abuse` can forward here
  },
});

const base = new URL(opts.url);
if (!["127.0.0.1", "localhost", "[::1]"].includes(base.hostname)) {
  console.error(`bench-abuse: refusing ${base.hostname}; this benchmark only targets a local proxy.`);
  process.exit(2);
}
const seconds = Math.min(60, Math.max(1, Number(opts.seconds)));
const rate = Math.min(100, Math.max(1, Number(opts.rate)));
const floodConcurrency = Math.min(512, Math.max(1, Number(opts["flood-concurrency"])));
const maxFlood = Math.max(1, Number(opts["max-flood"]));
// The victim's runs stay well inside the default limits (120 calls per run per minute).
const CALLS_PER_VICTIM_RUN = 100;

// Separate connection pools: the flood must not queue the victim's requests inside this client.
const victimAgent = new http.Agent({ keepAlive: true, maxSockets: 32 });
const floodAgent = new http.Agent({ keepAlive: true, maxSockets: floodConcurrency });

function post(path, token, body, agent) {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const started = performance.now();
    const req = http.request(
      new URL(path, base),
      {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "content-length": payload.length,
        },
      },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let envelope = null;
          try {
            envelope = JSON.parse(text);
          } catch {
            // counted as a failure below, and its text shown
          }
          resolve({ status: res.statusCode ?? 0, envelope, text, ms: performance.now() - started });
        });
      },
    );
    req.on("error", (error) =>
      resolve({ status: 0, envelope: null, ms: performance.now() - started, error }),
    );
    req.end(payload);
  });
}

async function openRun(key, agent, limits = {}) {
  for (let attempt = 0; attempt < 2; attempt++) {
    const answer = await post("/v1/runs", key, { namespace: "support", limits }, agent);
    if (answer.status === 201)
      return { id: answer.envelope.data.run_id, token: answer.envelope.data.run_token };
    const wait = answer.envelope?.error?.retry_after_ms;
    if (answer.status === 429 && wait && wait <= 60_000 && attempt === 0) {
      console.error(`bench-abuse: run opening rate-limited, waiting ${Math.ceil(wait / 1000)} s`);
      await new Promise((done) => setTimeout(done, wait + 100));
      continue;
    }
    const reason = answer.envelope?.error?.message ?? answer.error?.message ?? `HTTP ${answer.status}`;
    throw new Error(`cannot open a run with ${key.replace(/-demo-key$/, "")}'s key: ${reason}`);
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Open loop at a fixed rate, so a slow answer never delays the next request (no coordinated omission). */
async function victim(durationMs) {
  const results = [];
  const pending = [];
  let run = await openRun(opts["victim-key"], victimAgent, { max_calls: CALLS_PER_VICTIM_RUN });
  let callsInRun = 0;
  const started = performance.now();
  for (let index = 0; performance.now() - started < durationMs; index++) {
    const due = started + (index * 1000) / rate;
    const delay = due - performance.now();
    if (delay > 0) await new Promise((done) => setTimeout(done, delay));
    if (callsInRun === CALLS_PER_VICTIM_RUN) {
      run = await openRun(opts["victim-key"], victimAgent, { max_calls: CALLS_PER_VICTIM_RUN });
      callsInRun = 0;
    }
    callsInRun++;
    // Distinct arguments: the repeat breaker must not be what the victim measures.
    const body = { tool: "search_refund_policy", args: { query: `late delivery ${Date.now()}-${index}` } };
    pending.push(post(`/v1/runs/${run.id}/calls`, run.token, body, victimAgent).then((r) => results.push(r)));
  }
  await Promise.all(pending);
  return summarise(results);
}

function summarise(results) {
  const ms = results.map((r) => r.ms).sort((a, b) => a - b);
  const ok = results.filter((r) => r.status === 200 && r.envelope?.outcome === "success").length;
  const codes = {};
  const notEnvelopes = [];
  for (const r of results) {
    const code = r.envelope?.error?.code ?? (r.status === 200 ? "success" : `http_${r.status}`);
    codes[code] = (codes[code] ?? 0) + 1;
    if (r.envelope?.outcome === undefined)
      notEnvelopes.push(`${r.status}: ${(r.text ?? r.error?.message ?? "").slice(0, 200)}`);
  }
  return {
    requests: results.length,
    success_rate: results.length ? ok / results.length : 0,
    p50_ms: percentile(ms, 50),
    p90_ms: percentile(ms, 90),
    p99_ms: percentile(ms, 99),
    max_ms: ms.at(-1) ?? Number.NaN,
    outcomes: codes,
    not_envelopes: notEnvelopes.slice(0, 3),
  };
}

function get(path, agent) {
  return new Promise((resolve) => {
    const req = http.get(new URL(path, base), { agent }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on("error", (error) => resolve({ status: 0, error }));
  });
}

/**
 * Closed loop at full concurrency: every worker sends its next request as soon as one returns.
 * With `run` null it is the control: the same concurrency on GET /healthz, which touches no tenant,
 * no limiter and no Durable Object, to show what the local runtime itself costs under that load.
 */
async function flood(run, durationMs) {
  const statuses = {};
  let sent = 0;
  const started = performance.now();
  const worker = async () => {
    while (performance.now() - started < durationMs && sent < maxFlood) {
      const n = sent++;
      // Nine calls for every attempt to open another run: both routes are limited per tenant.
      const answer = !run
        ? await get("/healthz", floodAgent)
        : n % 10 === 9
          ? await post("/v1/runs", opts["flooder-key"], { namespace: "support" }, floodAgent)
          : await post(
              `/v1/runs/${run.id}/calls`,
              run.token,
              { tool: "lookup_order", args: { order_id: `U${String(n % 10_000).padStart(4, "0")}` } },
              floodAgent,
            );
      const key = answer.status === 0 ? "connection_error" : String(answer.status);
      statuses[key] = (statuses[key] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: floodConcurrency }, () => worker()));
  const elapsed = (performance.now() - started) / 1000;
  return { requests: sent, per_second: Math.round(sent / elapsed), statuses };
}

function row(label, s) {
  const f = (x) => (Number.isFinite(x) ? x.toFixed(1).padStart(8) : "     n/a");
  return `${label.padEnd(22)} ${String(s.requests).padStart(6)}  ${(s.success_rate * 100).toFixed(1).padStart(6)}%  ${f(s.p50_ms)} ${f(s.p90_ms)} ${f(s.p99_ms)} ${f(s.max_ms)}`;
}

async function main() {
  const durationMs = seconds * 1000;
  // The flooder's run is opened first: a rerun within a minute may have to wait for its opening limit.
  const floodRun = await openRun(opts["flooder-key"], floodAgent);
  // Warm-up: the first requests compile the worker and create the Durable Objects.
  await victim(1_000);

  const baseline = await victim(durationMs);
  const [underFlood, flooded] = await Promise.all([victim(durationMs), flood(floodRun, durationMs)]);
  const [underControl, control] = opts.control
    ? await Promise.all([victim(durationMs), flood(null, durationMs)])
    : [null, null];

  if (opts.json) {
    console.log(
      JSON.stringify(
        { seconds, rate, floodConcurrency, baseline, underFlood, flood: flooded, underControl, control },
        null,
        2,
      ),
    );
  } else {
    console.log(`victim ${opts["victim-key"]}: ${rate} calls/s for ${seconds} s per phase (open loop)`);
    console.log(`flooder ${opts["flooder-key"]}: ${floodConcurrency} requests in flight (closed loop)\n`);
    console.log(
      `${"victim phase".padEnd(22)} ${"calls".padStart(6)}  ${"success".padStart(7)}  ${"p50 ms".padStart(8)} ${"p90 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"max ms".padStart(8)}`,
    );
    console.log(row("without flood", baseline));
    console.log(row("during flood", underFlood));
    if (underControl) console.log(row("during /healthz load", underControl));
    console.log(`\nvictim outcomes without flood: ${JSON.stringify(baseline.outcomes)}`);
    console.log(`victim outcomes during flood:  ${JSON.stringify(underFlood.outcomes)}`);
    if (underControl) console.log(`victim outcomes during control: ${JSON.stringify(underControl.outcomes)}`);
    for (const sample of [baseline, underFlood, underControl].flatMap((phase) => phase?.not_envelopes ?? []))
      console.log(`  answer that is not an envelope: ${sample}`);
    console.log(
      `flood: ${flooded.requests} requests, ${flooded.per_second}/s, HTTP statuses ${JSON.stringify(flooded.statuses)}`,
    );
    if (control)
      console.log(
        `control (GET /healthz, no tenant): ${control.requests} requests, ${control.per_second}/s, HTTP statuses ${JSON.stringify(control.statuses)}`,
      );
  }
  victimAgent.destroy();
  floodAgent.destroy();
}

main().catch((error) => {
  console.error(`bench-abuse: ${error.message}`);
  console.error("Is the proxy running? See the header of scripts/bench-abuse.mjs.");
  process.exit(1);
});
