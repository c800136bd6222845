// The goals a bench run is held to, each read from the run's own figures: a read against the floor
// worker measured in the same loop, ratios between batches interleaved round-robin, and the cold
// paths against hello. Pure: figures in, verdicts out.

const fixed = (digits) => (value) => value.toFixed(digits);
const ms = fixed(2);
const finite = (value) => typeof value === "number" && Number.isFinite(value);

/**
 * Beside the production build's cold start: the sandbox build's, what the hello script given each
 * build's bindings takes (the start before either module's code runs), and Miniflare's config time
 * before workerd's spawn, which no start counts. Parts not measured are left out.
 */
function coldStartNote(cold) {
  const whole = fixed(0);
  const sandbox = finite(cold.proxy_healthz_ms)
    ? [`the sandbox build (one module) ${whole(cold.proxy_healthz_ms)} ms`]
    : [];
  const bindings = [
    ["production", cold.production_bindings_only_ms],
    ["sandbox", cold.bindings_only_ms],
  ]
    .filter(([, value]) => finite(value))
    .map(([build, value]) => `${build} ${whole(value)} ms`);
  const config =
    finite(cold.production_config_ms) && finite(cold.hello_config_ms)
      ? [
          `not counted, Miniflare's config before the spawn: production ${whole(cold.production_config_ms)} ms, hello ${whole(cold.hello_config_ms)} ms`,
        ]
      : [];
  return [
    ...sandbox,
    ...(bindings.length > 0 ? [`bindings only: ${bindings.join(", ")}`] : []),
    ...config,
  ].join("; ");
}

/**
 * A stage's profile, beside its goal: its busy time per call and its three heaviest functions of
 * the project's own (with what they call), so a goal missed names its cause.
 */
function profileNote(f, stage) {
  const figures = f.profile?.stages?.[stage];
  if (!figures) return "";
  const heaviest = (figures.heaviest_total ?? figures.heaviest)
    .slice(0, 3)
    .map((row) => `${row.function} ${(row.share * 100).toFixed(0)}%`)
    .join(", ");
  return `profile: ${fixed(3)(figures.busy_ms_per_call)} ms busy per call; heaviest ${heaviest}`;
}

const joined = (...parts) => parts.filter(Boolean).join("; ");

/** The c=1 CPU series `name`'s median, or undefined when not measured. */
const cpuOf = (f, name) => f.cpu_c1?.cpu_ms?.[name]?.median;

/**
 * Each goal: what it measures, how its value and its bound are read from the figures (null when
 * not measured), which side of the bound passes, and how the bound reads.
 */
export const GOALS = [
  {
    name: "read_own_cpu_ms",
    what: "the proxy's own CPU per read: workerd CPU of a proxied read − direct read − floor worker, c=1, median of rounds (ms)",
    value: (f) => cpuOf(f, "proxied_read") - cpuOf(f, "direct_read") - cpuOf(f, "floor"),
    bound: () => 0.35,
    side: "max",
    goal: (bound) => `≤ ${ms(bound)}`,
    note: (f) =>
      joined(
        `proxied ${ms(cpuOf(f, "proxied_read"))}, direct ${ms(cpuOf(f, "direct_read"))}, floor ${ms(cpuOf(f, "floor"))} ms`,
        profileNote(f, "read"),
      ),
  },
  {
    name: "read_own_p50_ms",
    what: "the proxy's own latency per read: paired p50 of proxied − direct, minus (floor with its upstream hop − hello) (ms)",
    value: (f) => f.paired_ms.proxied_minus_direct.p50 - f.paired_ms.floor_upstream_minus_hello.p50,
    bound: () => 0.4,
    side: "max",
    goal: (bound) => `≤ ${ms(bound)}`,
    note: (f) =>
      `proxied − direct ${ms(f.paired_ms.proxied_minus_direct.p50)} ms; the floor worker with its upstream hop over hello ${ms(f.paired_ms.floor_upstream_minus_hello.p50)} ms`,
  },
  {
    name: "read_added_p99_ms",
    what: "read: p99 of proxied − direct, paired per round (ms)",
    value: (f) => f.paired_ms?.proxied_minus_direct?.p99,
    bound: (f) => f.paired_ms.floor_minus_hello.p99 + 1.5,
    side: "max",
    goal: (bound) => `≤ the floor worker's paired p99 over hello + 1.5 = ${ms(bound)}`,
    note: (f) => {
      const floor = f.paired_ms?.floor_minus_hello;
      return floor
        ? `the floor worker over hello, paired: p50 ${ms(floor.p50)} ms, p99 ${ms(floor.p99)} ms`
        : "";
    },
  },
  {
    name: "many_runs_over_one_run",
    what: "reads/s, 200 runs over one run (interleaved batches)",
    value: (f) => f.throughput.batches.many_runs.per_s / f.throughput.batches.one_run.per_s,
    bound: (f) => f.throughput.batches.many_floor_objects.per_s / f.throughput.batches.floor.per_s - 0.05,
    side: "min",
    goal: (bound) => `≥ the floor worker's 200 objects over one − 0.05 = ${fixed(2)(bound)}`,
    note: (f) => {
      const { one_run: one, many_runs: many, direct_read: direct } = f.throughput.batches;
      return `one run ${Math.round(one.per_s)}/s, 200 runs ${Math.round(many.per_s)}/s; direct ${Math.round(direct.per_s)}/s at ${fixed(3)(direct.cpu_ms_per_request ?? Number.NaN)} ms CPU/request`;
    },
  },
  {
    name: "replay_over_floor_p50",
    what: "replay latency p50 over the floor worker's p50, c=1",
    value: (f) => f.latency_ms.replay.p50 / f.latency_ms.floor.p50,
    bound: () => 1.3,
    side: "max",
    goal: (bound) => `≤ ${bound}`,
    note: (f) =>
      joined(
        `replay ${ms(f.latency_ms.replay.p50)} ms, floor ${ms(f.latency_ms.floor.p50)} ms`,
        finite(cpuOf(f, "replay")) ? `replay CPU ${ms(cpuOf(f, "replay"))} ms at c=1` : "",
        profileNote(f, "replay"),
      ),
  },
  {
    name: "run_open_cpu_ms",
    what: "run open (POST /v1/runs): workerd CPU per open (ms)",
    value: (f) => f.run_open?.cpu_ms_per_open,
    bound: () => 2,
    side: "max",
    goal: (bound) => `≤ ${ms(bound)}`,
    note: (f) =>
      `p50 ${ms(f.run_open.latency_ms.p50)} ms at c=1; ${Math.round(f.run_open.opens_per_s)} opens/s at c=${f.run_open.concurrency}` +
      (f.run_open.open_and_first_read_cpu_ms === undefined
        ? ""
        : `; an open and its first read ${ms(f.run_open.open_and_first_read_cpu_ms)} ms CPU`) +
      (f.run_open.new_floor_object_cpu_ms === undefined
        ? ""
        : `; a new floor object (one table, one INSERT) ${ms(f.run_open.new_floor_object_cpu_ms)} ms CPU, p50 ${ms(f.run_open.new_floor_object_p50_ms)} ms` +
          (f.run_open.new_floor_objects_per_s === undefined
            ? ""
            : `, ${Math.round(f.run_open.new_floor_objects_per_s)}/s at c=${f.run_open.concurrency}`)),
  },
  {
    name: "first_write_proxy_cpu_ms",
    what: "first write: the proxy's CPU share, proxy + sandbox − the sandbox's own two requests (ms)",
    value: (f) => f.first_write?.proxy_share_cpu_ms,
    bound: () => 2.5,
    side: "max",
    goal: (bound) => `≤ ${ms(bound)}, with the tenant-wide claim and outbox kept`,
    note: (f) =>
      joined(
        `workerd CPU per write ${ms(f.first_write.cpu_ms_per_write)} ms, the sandbox alone ${ms(f.first_write.direct_cpu_ms_per_write)} ms; p50 ${ms(f.latency_ms.first_write.p50)} ms, p99 ${ms(f.latency_ms.first_write.p99)} ms`,
        profileNote(f, "first_write"),
      ),
  },
  {
    name: "mcp_session_added_p50_ms",
    what: "MCP 2025 session tools/call: p50 of MCP − REST read, paired per round (ms)",
    value: (f) => f.paired_ms?.mcp_minus_rest?.p50,
    bound: () => 0.3,
    side: "max",
    goal: (bound) => `≤ ${ms(bound)}`,
    note: (f) =>
      joined(
        `MCP call p50 ${ms(f.latency_ms.mcp_session_call.p50)} ms`,
        finite(cpuOf(f, "mcp_session_call"))
          ? `CPU ${ms(cpuOf(f, "mcp_session_call"))} ms at c=1, the REST read's ${ms(cpuOf(f, "proxied_read"))} ms`
          : "",
      ),
  },
  {
    name: "idle_run_added_ms",
    what: "idle run's next call (object evicted) over a warm read, p50 (ms)",
    value: (f) => f.idle_run?.added_p50_ms,
    bound: (f) => (f.idle_run ? f.idle_run.floor_added_p50_ms + 1 : null),
    side: "max",
    goal: (bound, f) =>
      `≤ evicted floor object + 1 = ${ms(bound)} (floor object evicted − warm = ${ms(f.idle_run.floor_added_p50_ms)})`,
    note: (f) => idleRunNote(f),
  },
  {
    name: "startup_cpu_ms",
    what: "startup CPU of the production build, median of wrangler check startup (ms)",
    value: (f) => f.startup.check_startup?.cpu_ms,
    bound: () => 35,
    side: "max",
    goal: (bound) => `≤ ${bound}`,
    note: (f) =>
      f.startup.check_startup_sandbox?.cpu_ms != null
        ? `the sandbox build (one module) ${fixed(1)(f.startup.check_startup_sandbox.cpu_ms)} ms`
        : "",
  },
  {
    name: "cold_start_ms",
    what: "cold start of the production build, new workerd to first /healthz 200, median (ms)",
    // Reports from before the production build was served have only the sandbox build's figure:
    // not measured, with that figure beside it.
    value: (f) => f.startup.cold_start?.production_healthz_ms,
    bound: (f) => (f.startup.cold_start ? f.startup.cold_start.hello_ms + 150 : null),
    side: "max",
    goal: (bound, f) =>
      `≤ hello + 150 = ${fixed(0)(bound)} (hello ${fixed(0)(f.startup.cold_start.hello_ms)})`,
    note: (f) => coldStartNote(f.startup.cold_start),
  },
  {
    name: "bundle_gzip_kib",
    what: "production bundle an isolate starts with, gzip (KiB)",
    value: (f) => f.bundle?.proxy?.gzip_kib,
    bound: () => 200,
    side: "max",
    goal: (bound) => `≤ ${bound}`,
    note: (f) => {
      const total = f.bundle.production_total;
      const startup = `raw ${fixed(1)(f.bundle.proxy.kib)} KiB`;
      return total
        ? `${startup} in ${f.bundle.proxy.modules} module(s); with the chunks loaded on first use ${fixed(1)(total.gzip_kib)} KiB gzip`
        : startup;
    },
  },
  {
    name: "trace_first_page_p50_ms",
    what: "trace's first page (100 entries) of a 10,000-call run, p50 (ms)",
    value: (f) => f.trace?.p50_ms,
    bound: () => 5,
    side: "below",
    goal: (bound) => `< ${bound}`,
  },
  {
    name: "trace_fill_rate_kept",
    what: "10,000-call fill: calls/s of the last thousand over the first",
    value: (f) => {
      const rates = f.trace?.fill_calls_per_s_by_thousand;
      return rates && rates.length > 1 ? rates[rates.length - 1] / rates[0] : null;
    },
    bound: () => 0.8,
    side: "min",
    goal: (bound) => `≥ ${bound}`,
  },
];

/**
 * Every goal against `figures`: `{ name, what, value, bound, goal, meets, note }`. A figure that was
 * not measured (or not a number) has `meets: null`; a note that cannot be read is left out.
 */
export function evaluateGoals(figures, goals = GOALS) {
  return goals.map(({ name, what, value, bound, side, goal, note }) => {
    const read = (fn) => {
      try {
        return fn(figures);
      } catch {
        return null;
      }
    };
    const measured = read(value);
    const limit = read(bound);
    const known = finite(measured) && finite(limit);
    const meets = !known
      ? null
      : side === "max"
        ? measured <= limit
        : side === "min"
          ? measured >= limit
          : measured < limit;
    let goalText = "-";
    let noteText = "";
    try {
      goalText = finite(limit) ? goal(limit, figures) : "-";
    } catch {
      goalText = "-";
    }
    try {
      noteText = note ? note(figures) : "";
    } catch {
      noteText = "";
    }
    return {
      name,
      what,
      value: finite(measured) ? measured : null,
      bound: finite(limit) ? limit : null,
      goal: goalText,
      meets,
      note: noteText,
    };
  });
}

/**
 * Beside the idle run's figure: the same calls after a restart, which also recover each object's
 * write-ahead log. Reports from before the eviction phase measured only that.
 */
function idleRunNote(f) {
  const restart = f.idle_run_after_restart;
  if (restart) {
    return `after a restart (each object recovers its write-ahead log on open): ${ms(restart.added_p50_ms)} over a warm read, floor object ${ms(restart.floor_added_p50_ms)}`;
  }
  return f.idle_run?.how?.includes("restarted") ? "measured after a restart" : "";
}
