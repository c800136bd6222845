// The bench report as Markdown: the goal table (figure, value, goal, meets) and the figures behind
// it. Printed by `npm run bench` and written into the README's Performance section by
// `npm run readme -- --only performance`. Pure: report in, text out.

const num = (value, digits = 2) =>
  typeof value === "number" && Number.isFinite(value) ? value.toFixed(digits) : "-";
const whole = (value) =>
  typeof value === "number" && Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "-";
const cell = (text) => String(text).replaceAll("|", "\\|");

/** A Markdown table. */
export function markdownTable(header, rows) {
  return [
    `| ${header.map(cell).join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((cells) => `| ${cells.map(cell).join(" | ")} |`),
  ].join("\n");
}

const verdict = (meets) => (meets === null ? "not measured" : meets ? "yes" : "no");

/** The goals, one row each: what, the value, the goal and whether the value meets it. */
export function goalsTable(goals) {
  return markdownTable(
    ["figure", "value", "goal", "meets", "beside it"],
    goals.map((goal) => [goal.what, num(goal.value), goal.goal, verdict(goal.meets), goal.note || ""]),
  );
}

const LATENCY_NAMES = {
  hello: "hello (the runtime's floor)",
  floor: "floor worker (one DO hop, one SQLite INSERT)",
  floor_upstream: "floor worker, its object fetching hello first (one service-binding hop more)",
  direct_read: "read, direct to the sandbox",
  proxied_read: "read, through the proxy",
  mcp_session_call: "read, MCP 2025 session `tools/call`",
  first_write: "first write (`create_internal_ticket`)",
  replay: "replay (no upstream)",
};

const BATCH_NAMES = {
  hello: "hello",
  floor: "floor worker",
  many_floor_objects: "floor worker, 200 objects",
  direct_read: "read, direct",
  one_run: "read, proxy, one run",
  many_runs: "read, proxy, 200 runs",
  replay: "replay, one run",
};

/** The c=1 latencies and the paired differences. */
export function latencyTable(figures) {
  const rows = Object.entries(figures.latency_ms).map(([name, s]) => [
    LATENCY_NAMES[name] ?? name,
    num(s.p50),
    num(s.p99),
  ]);
  const paired = figures.paired_ms ?? {};
  if (paired.proxied_minus_direct)
    rows.push([
      "proxied − direct, same round",
      num(paired.proxied_minus_direct.p50),
      num(paired.proxied_minus_direct.p99),
    ]);
  if (paired.floor_minus_hello)
    rows.push([
      "floor worker − hello, same round",
      num(paired.floor_minus_hello.p50),
      num(paired.floor_minus_hello.p99),
    ]);
  if (paired.floor_upstream_minus_hello)
    rows.push([
      "floor worker with its upstream hop − hello, same round",
      num(paired.floor_upstream_minus_hello.p50),
      num(paired.floor_upstream_minus_hello.p99),
    ]);
  if (paired.mcp_minus_rest)
    rows.push([
      "MCP − REST read, same round",
      num(paired.mcp_minus_rest.p50),
      num(paired.mcp_minus_rest.p99),
    ]);
  return markdownTable(["c=1 latency, ms", "p50", "p99"], rows);
}

/** The interleaved throughput batches. */
export function throughputTable(throughput) {
  return markdownTable(
    [
      `c=${throughput.concurrency}, ${throughput.rounds} rounds of ${throughput.round_seconds} s`,
      "requests/s",
      "min–max of rounds",
      "workerd CPU ms/request",
    ],
    Object.entries(throughput.batches).map(([name, batch]) => [
      BATCH_NAMES[name] ?? name,
      whole(batch.per_s),
      `${whole(batch.per_s_min)}–${whole(batch.per_s_max)}`,
      num(batch.cpu_ms_per_request, 3),
    ]),
  );
}

const STAGE_NAMES = { read: "read", first_write: "first write", replay: "replay" };

/** Each profiled stage's heaviest functions, by self time and the project's by total time. */
export function profileTables(profile) {
  const table = (title, rows) =>
    markdownTable(
      [title, "ms/call", "share"],
      rows.map((row) => [row.function, num(row.ms_per_call, 3), `${(row.share * 100).toFixed(1)}%`]),
    );
  return Object.entries(profile.stages)
    .flatMap(([stage, figures]) => {
      const head = `${STAGE_NAMES[stage] ?? stage} (${num(figures.busy_ms_per_call, 3)} ms busy per call)`;
      return [
        table(`${head}: heaviest, self time`, figures.heaviest),
        ...(figures.heaviest_total
          ? [table(`${head}: heaviest of src/, with callees`, figures.heaviest_total)]
          : []),
      ];
    })
    .join("\n\n");
}

/** One line saying where and how the report was measured. */
export function provenance(report) {
  const load = report.machine.load_average_1m;
  return [
    `Commit \`${report.commit.slice(0, 7)}\`${report.dirty ? " (with uncommitted changes)" : ""}, ${report.measured_at.slice(0, 10)},`,
    `${report.machine.cpus} CPUs (${report.machine.model ?? "unknown model"}), load average ${num(load.before)} before and ${num(load.after)} after,`,
    `Node ${report.node}, miniflare ${report.miniflare}, storage on ${report.storage}; \`${report.command}\`;`,
    `${report.client_resent_requests} request(s) resent after a reset, counted as requests.`,
  ].join("\n");
}

const CPU_NAMES = {
  hello: "hello",
  floor: "floor worker",
  direct_read: "read, direct",
  proxied_read: "read, through the proxy",
  replay: "replay",
  mcp_session_call: "read, MCP 2025 session `tools/call`",
};

/** workerd's CPU per request at c=1, min and median of the rounds. */
export function cpuTable(cpu) {
  return markdownTable(
    [`workerd CPU per request, c=1, ${cpu.rounds} rounds of ${cpu.count} (ms)`, "min", "median"],
    Object.entries(cpu.cpu_ms).map(([name, figures]) => [
      CPU_NAMES[name] ?? name,
      num(figures.min, 3),
      num(figures.median, 3),
    ]),
  );
}

/**
 * The README's generated Performance region: provenance, goals, latency and throughput, and where
 * measured, the CPU per request at c=1 and each stage's profile.
 */
export function performanceMarkdown(report) {
  const { figures } = report;
  return `${[
    provenance(report),
    goalsTable(report.goals),
    latencyTable(figures),
    throughputTable(figures.throughput),
    ...(figures.cpu_c1 ? [cpuTable(figures.cpu_c1)] : []),
    ...(figures.profile ? [profileTables(figures.profile)] : []),
  ].join("\n\n")}\n`;
}
