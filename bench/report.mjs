// The benchmark's results: the ratios docs/performance.md holds the proxy to, checked against their goals,
// a readable table, and reports/bench.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "../scripts/local-stack.mjs";

/** Each goal: how its figure is read from the figures, its bound and which side of it passes. */
const GOALS = [
  {
    name: "added_p50_ms",
    what: "p50 a proxied read adds over the direct read",
    value: (f) => f.latency_ms.proxied_read.p50 - f.latency_ms.direct_read.p50,
    max: 1.0,
  },
  {
    name: "added_p99_ms",
    what: "p99 a proxied read adds over the direct read",
    value: (f) => f.latency_ms.proxied_read.p99 - f.latency_ms.direct_read.p99,
    max: 2.0,
  },
  {
    name: "replay_over_direct_p50",
    what: "replay p50 / direct read p50",
    value: (f) => f.latency_ms.replay.p50 / f.latency_ms.direct_read.p50,
    max: 0.5,
  },
  {
    name: "one_run_over_direct_c16",
    what: "one run's proxied reads/s / direct reads/s, c=16",
    value: (f) => f.throughput.c16.proxied_read_one_run.per_s / f.throughput.c16.direct_read.per_s,
    min: 0.7,
  },
  {
    name: "startup_cpu_ms",
    what: "startup CPU of the module (wrangler check startup)",
    value: (f) => f.startup.check_startup?.cpu_ms ?? null,
    max: 50,
  },
  {
    name: "trace_first_page_p50_ms",
    what: "GET /v1/runs/{id}/trace?limit=100 p50, 10,000-call run",
    value: (f) => f.trace?.p50_ms ?? null,
    below: 5,
  },
];

/** `{ name: { what, value, goal, pass } }`; a figure that was not measured has no verdict. */
export function ratiosOf(figures) {
  return Object.fromEntries(
    GOALS.map(({ name, what, value, ...bound }) => {
      const measured = value(figures);
      const [goal, pass] =
        bound.max !== undefined
          ? [`<= ${bound.max}`, measured <= bound.max]
          : bound.min !== undefined
            ? [`>= ${bound.min}`, measured >= bound.min]
            : [`< ${bound.below}`, measured < bound.below];
      return [name, { what, value: measured, goal, pass: measured === null ? null : pass }];
    }),
  );
}

const num = (value, digits = 2) =>
  typeof value === "number" && Number.isFinite(value) ? value.toFixed(digits) : "-";
const row = (cells, widths) => `| ${cells.map((cell, index) => cell.padEnd(widths[index])).join(" | ")} |`;

function table(title, header, rows) {
  const widths = header.map((cell, index) => Math.max(cell.length, ...rows.map((r) => r[index].length)));
  console.log(`\n${title}\n${row(header, widths)}`);
  console.log(`|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`);
  for (const cells of rows) console.log(row(cells, widths));
}

/** Prints the figures and ratios as Markdown tables. */
export function printReport({ figures, ratios, machine, storage, client_resent_requests: resent }) {
  const { latency_ms: latency, throughput, cpu_ms_per_request: cpu, startup, bundle } = figures;
  const load = machine.load_average_1m;
  console.log(
    `\n${machine.cpus} CPUs, load average ${num(load.before)} before and ${num(load.after)} after; storage on ${storage}; ${resent} request(s) resent on a closed connection`,
  );
  table(
    "Latency at c=1 (ms)",
    ["request", "p50", "p99", "mean"],
    Object.entries(latency).map(([name, s]) => [name, num(s.p50), num(s.p99), num(s.mean)]),
  );
  const names = Object.keys(throughput.c16);
  table(
    "Throughput (requests/s)",
    ["request", "c=16", "c=64"],
    names.map((name) => [
      name,
      String(throughput.c16[name]?.per_s ?? "-"),
      String(throughput.c64[name]?.per_s ?? "-"),
    ]),
  );
  table(
    "workerd CPU per request (ms, over the c=16 batch)",
    ["request", "cpu ms"],
    Object.entries(cpu).map(([name, value]) => [name, num(value, 3)]),
  );
  table(
    "Startup and size",
    ["measure", "value"],
    [
      ["startup CPU, wrangler check startup (ms)", num(startup.check_startup?.cpu_ms, 1)],
      ["cold start to first /healthz 200 (ms)", num(startup.cold_start.proxy_healthz_ms, 1)],
      ["cold start, hello with the proxy's bindings (ms)", num(startup.cold_start.bindings_only_ms, 1)],
      ["cold start, hello alone (ms)", num(startup.cold_start.hello_ms, 1)],
      ["cold start added by the proxy's module (ms)", num(startup.cold_start.added_by_module_ms, 1)],
      [
        "workerd CPU to first /healthz, less bindings only (ms)",
        num(startup.cold_start.cpu_added_by_module_ms),
      ],
      ["proxy bundle gzip (KiB)", num(bundle.proxy.gzip_kib, 1)],
      ["proxy bundle raw (KiB)", num(bundle.proxy.kib, 1)],
      ...(figures.trace
        ? [
            ["trace first page p50 (ms), 10,000 calls", num(figures.trace.p50_ms)],
            ["trace first page size (bytes)", String(figures.trace.bytes)],
          ]
        : []),
    ],
  );
  table(
    "Goals",
    ["ratio", "value", "goal", "pass"],
    Object.entries(ratios).map(([name, r]) => [
      name,
      num(r.value, 3),
      r.goal,
      r.pass === null ? "not measured" : r.pass ? "yes" : "NO",
    ]),
  );
}

/** Writes reports/bench.json and returns its path. */
export function writeReport(report) {
  mkdirSync(join(root, "reports"), { recursive: true });
  const path = join(root, "reports", "bench.json");
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  return path;
}
