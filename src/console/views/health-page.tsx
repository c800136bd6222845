/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { SignedInOperator } from "../../auth/principal";
import { ALERT_RATES, type AlertRate } from "../../config/alerts";
import { COUNTERS } from "../../metrics/events";
import type { MetricsReading } from "../../metrics/read";
import type { EnvironmentName } from "../../wire/envelope";
import type { FiringAlert, MetricSeries } from "../../wire/metrics";
import { type ComparedMeasure, compareDays, type DayComparison } from "../day-comparison";
import type { DeprecatedUse } from "../deprecated-callers";
import { formatSpan } from "../format";
import { plural } from "../plural";
import type { TenantUpstream } from "../tenant-tools";
import { BarChart, CHART_COLORS, LineChart } from "./charts";
import { DeprecatedTools } from "./deprecated-tools";
import { Layout, Notice } from "./layout";

export interface HealthPageProps {
  environment: EnvironmentName;
  session: SignedInOperator;
  /** Hourly buckets of the last 48 hours: charts draw the last 24, the table compares both days. */
  reading: MetricsReading;
  /** The first bucket of "today": the last 24 hours start here. */
  split: number;
  /** The upstreams the tenant's tools reach: whether each applies a key once, and on what evidence. */
  upstreams: readonly TenantUpstream[];
  /** The tenant's deprecated tools, with the runs that still call them. */
  deprecated: readonly DeprecatedUse[];
}

/**
 * The second leg of exactly-once, per upstream: the proxy derives the key, the upstream must apply
 * it once. Certified, only declared, refuted or ignoring keys, and what a write in doubt gets.
 */
const Upstreams: FC<{ upstreams: readonly TenantUpstream[] }> = ({ upstreams }) => (
  <section aria-labelledby="upstreams-heading">
    <h2 id="upstreams-heading">Upstreams and idempotency keys</h2>
    <table class="upstreams">
      <thead>
        <tr>
          <th scope="col">Upstream</th>
          <th scope="col">Keys</th>
          <th scope="col">A write in doubt</th>
        </tr>
      </thead>
      <tbody>
        {upstreams.map((upstream) => (
          <tr>
            <td>
              <code>
                {upstream.namespace}.{upstream.upstream}
              </code>
            </td>
            <td>{upstream.standing}</td>
            <td>{upstream.in_doubt}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </section>
);

const count = (value: number) => String(Math.round(value));
/** "60 %", "66.7 %": one decimal at most. */
const percent = (value: number) => `${Number((value * 100).toFixed(1))} %`;
/** "1 call", "5 calls". */
const counted = (value: number, noun: string) => plural(Math.round(value), noun);

function measureText(measure: ComparedMeasure, value: number | null): string {
  if (value === null) return "—";
  return measure.kind === "rate" ? percent(value) : count(value);
}

const SOURCES = {
  analytics_engine: "Workers Analytics Engine (sampled at high volume: counts are estimates then)",
  metrics_store: "this tenant's metrics store (exact counts)",
} as const;

function labelOf(rate: string): string {
  return Object.hasOwn(ALERT_RATES, rate) ? ALERT_RATES[rate as AlertRate].label : rate;
}

/** Alerts firing now: each from its first crossing until a window says its rate recovered. */
const FiringAlerts: FC<{ alerts: FiringAlert[] }> = ({ alerts }) => (
  <Notice kind="error">
    {alerts.map((alert) => (
      <p class="alert-firing" data-rate={alert.rate}>
        <strong>{labelOf(alert.rate)}</strong>: {alert.value === null ? "—" : percent(alert.value)} of{" "}
        {counted(alert.sample, "call")} in the {alert.window_minutes}-minute window from{" "}
        {alert.window_start.slice(11, 16)} UTC, {alert.fires} the threshold of {percent(alert.threshold)}.
        Firing since {alert.since.slice(0, 16).replace("T", " ")} UTC, until the rate recovers.
      </p>
    ))}
  </Notice>
);

/** Yesterday, today and whether it got worse, for one namespace. */
const ComparisonTable: FC<{ comparison: DayComparison }> = ({ comparison }) => (
  <table class="compare">
    <caption>
      Today (last 24 h) against yesterday (the 24 h before)
      {comparison.baseline ? null : ": no baseline yet, yesterday has no data"}
    </caption>
    <thead>
      <tr>
        <th scope="col">Measure</th>
        <th scope="col">Yesterday</th>
        <th scope="col">Today</th>
      </tr>
    </thead>
    <tbody>
      {comparison.measures.map((measure) => (
        <tr class={measure.worse ? "worse" : undefined}>
          <th scope="row">{measure.label}</th>
          <td>{comparison.baseline ? measureText(measure, measure.yesterday) : "no data"}</td>
          <td>
            {measureText(measure, measure.today)}
            {measure.worse ? (
              <>
                {" "}
                <span class="badge badge-worse">worse</span>
              </>
            ) : null}
          </td>
        </tr>
      ))}
    </tbody>
  </table>
);

/** One namespace: the comparison first (the question an operator comes with), then the charts. */
const NamespaceHealth: FC<{ series: MetricSeries; comparison: DayComparison; split: number }> = ({
  series,
  comparison,
  split,
}) => {
  const day = series.points.filter((point) => Date.parse(point.t) >= split);
  const times = day.map((point) => point.t);
  const total = (pick: (point: (typeof day)[number]) => number) =>
    day.reduce((sum, point) => sum + pick(point), 0);
  const calls = total((point) => point.calls);
  const succeeded = total((point) => point.succeeded);
  const invalid = total((point) => point.invalid);
  const decided = total((point) => point.approvals_decided);
  const wait = total((point) => point.approval_wait_ms_total);
  const drifted = total((point) => point.drifted);
  const overdue = total((point) => point.approvals_overdue);
  const id = (chart: string) => `${series.namespace}-${chart}`;
  const rateSummary = (part: number, label: string) =>
    calls > 0 ? `${percent(part / calls)} ${label} over the day` : "no calls in the last 24 h";
  // A call waiting for a human is neither success nor failure: the success rate leaves it out.
  const waits = total((point) => point.escalations);
  const answered = Math.max(0, calls - waits);
  const successSummary =
    answered > 0
      ? `${percent(succeeded / answered)} succeeded over the day${waits > 0 ? ` (${counted(waits, "call")} waiting for a human not counted)` : ""}`
      : "no answered calls in the last 24 h";
  return (
    <section class="namespace-health" aria-labelledby={id("heading")}>
      <h2 id={id("heading")}>
        Namespace <code>{series.namespace}</code>
      </h2>
      {drifted > 0 ? (
        <Notice kind="error">
          <p>
            {counted(drifted, "call")} refused in the last 24 h because a remote tool's definition no longer
            matches the one reviewed (<code>upstream_changed</code>): the server changed it. Review the change
            with <code>npm run tools -- check --remote --namespace {series.namespace}</code>, then re-pin it
            with <code>npm run tools -- pin {series.namespace}</code>.
          </p>
        </Notice>
      ) : null}
      {overdue > 0 ? (
        <Notice kind="info">
          <p>
            {counted(overdue, "approval")} went past {overdue === 1 ? "its" : "their"} SLA undecided in the
            last 24 h; the escalation role was told of each.
          </p>
        </Notice>
      ) : null}
      <ComparisonTable comparison={comparison} />
      <div class="health-charts">
        <BarChart
          id={id("calls")}
          title="Calls per hour"
          summary={`${counted(calls, "call")} in the last 24 h`}
          times={times}
          series={[{ label: "calls", color: CHART_COLORS.accent, values: day.map((point) => point.calls) }]}
          format={count}
        />
        <LineChart
          id={id("success")}
          title="Success rate"
          summary={successSummary}
          times={times}
          series={[
            { label: "success rate", color: CHART_COLORS.ok, values: day.map((point) => point.success_rate) },
          ]}
          format={percent}
          max={1}
        />
        <LineChart
          id={id("invalid")}
          title="Invalid-call rate"
          summary={rateSummary(invalid, "invalid (validation or policy refusals)")}
          times={times}
          series={[
            {
              label: "invalid rate",
              color: CHART_COLORS.bad,
              values: day.map((point) => point.invalid_rate),
            },
          ]}
          format={percent}
          max={1}
        />
        <BarChart
          id={id("escalations")}
          title="Escalations and loops"
          summary={`${counted(
            total((point) => point.escalations),
            "escalation",
          )} (a call waiting for a human), ${counted(
            total((point) => point.loops),
            "loop",
          )} refused by the repeat breaker`}
          times={times}
          series={[
            {
              label: "escalations",
              color: CHART_COLORS.purple,
              values: day.map((point) => point.escalations),
            },
            { label: "loops", color: CHART_COLORS.bad, values: day.map((point) => point.loops) },
          ]}
          format={count}
        />
        <BarChart
          id={id("approvals")}
          title="Approvals"
          summary={`${count(total((point) => point.approvals_asked))} asked, ${count(total((point) => point.approved))} approved, ${count(total((point) => point.rejected))} rejected, ${count(total((point) => point.expired))} expired; ${decided > 0 ? `average wait ${formatSpan(wait / decided)}` : "none decided"}`}
          times={times}
          series={[
            { label: "asked", color: CHART_COLORS.accent, values: day.map((point) => point.approvals_asked) },
            { label: "approved", color: CHART_COLORS.ok, values: day.map((point) => point.approved) },
            { label: "rejected", color: CHART_COLORS.bad, values: day.map((point) => point.rejected) },
          ]}
          format={count}
        />
        <BarChart
          id={id("replays")}
          title="Replays and duplicates prevented"
          summary={`${counted(
            total((point) => point.replays),
            "answer",
          )} served from the ledger, ${counted(
            total((point) => point.duplicates_prevented),
            "effect",
          )} not done twice`}
          times={times}
          series={[
            { label: "replays", color: CHART_COLORS.muted, values: day.map((point) => point.replays) },
            {
              label: "duplicates prevented",
              color: CHART_COLORS.warn,
              values: day.map((point) => point.duplicates_prevented),
            },
          ]}
          format={count}
        />
      </div>
    </section>
  );
};

/**
 * The answer an operator comes with, above the charts: what got worse than yesterday, or nothing;
 * a namespace whose yesterday has no data is compared with nothing ("no baseline yet").
 */
const Verdict: FC<{ comparisons: DayComparison[] }> = ({ comparisons }) => {
  const worse = comparisons.filter((comparison) => comparison.worse.length > 0);
  const unjudged = comparisons.filter((comparison) => !comparison.baseline);
  const judged = comparisons.length - unjudged.length;
  return (
    <>
      {worse.length > 0 ? (
        <Notice kind="info">
          {worse.map((comparison) => (
            <p>
              Worse than yesterday in <code>{comparison.namespace}</code>:{" "}
              {comparison.worse.join(", ").toLowerCase()}.
            </p>
          ))}
        </Notice>
      ) : judged > 0 || comparisons.length === 0 ? (
        <Notice kind="ok">
          <p>Nothing got worse than yesterday{unjudged.length > 0 ? " where there is a baseline" : ""}.</p>
        </Notice>
      ) : null}
      {unjudged.length > 0 ? (
        <Notice kind="info">
          <p class="no-baseline">
            No baseline yet in{" "}
            {unjudged.map((comparison, index) => (
              <>
                {index > 0 ? ", " : ""}
                <code>{comparison.namespace}</code>
              </>
            ))}
            : yesterday has no data, so nothing there is compared with it.
          </p>
        </Notice>
      ) : null}
    </>
  );
};

/** Whether a namespace counted nothing at all over the range read. */
function isQuiet(series: MetricSeries): boolean {
  return COUNTERS.every((counter) => series.totals[counter] === 0);
}

/** `/console/health`: is any agent looping or failing more than yesterday, per namespace. */
export const HealthPage: FC<HealthPageProps> = ({
  environment,
  session,
  reading,
  split,
  upstreams,
  deprecated,
}) => {
  if (!reading.ok) {
    return (
      <Layout title="Agent health" environment={environment} session={session} section="health">
        <h1>Agent health</h1>
        <Notice kind="error">
          <p>{reading.message}</p>
        </Notice>
        <DeprecatedTools uses={deprecated} />
        <Upstreams upstreams={upstreams} />
      </Layout>
    );
  }
  const { report } = reading;
  // A namespace without a call or an approval in the whole range has nothing to chart or compare.
  const quiet = report.series.filter(isQuiet).map((series) => series.namespace);
  const namespaces = report.series
    .filter((series) => !isQuiet(series))
    .map((series) => ({ series, comparison: compareDays(series, split) }));
  const comparisons = namespaces.map(({ comparison }) => comparison);
  return (
    <Layout title="Agent health" environment={environment} session={session} section="health">
      <h1>Agent health</h1>
      <p class="lede">
        Tool calls and approvals of <strong>{report.tenant}</strong>'s agents over the last 24 hours, in
        hourly buckets (UTC), from {SOURCES[report.source]}. Hover a bar or point for its hour.
      </p>
      {report.alerts.length > 0 ? <FiringAlerts alerts={report.alerts} /> : null}
      <Verdict comparisons={comparisons} />
      {namespaces.map(({ series, comparison }) => (
        <NamespaceHealth series={series} comparison={comparison} split={split} />
      ))}
      {quiet.length > 0 ? (
        <p class="quiet-namespaces">
          No traffic in the last 48 h in{" "}
          {quiet.map((namespace, index) => (
            <>
              {index > 0 ? ", " : ""}
              <code>{namespace}</code>
            </>
          ))}
          : no calls or approvals to chart.
        </p>
      ) : null}
      <DeprecatedTools uses={deprecated} />
      <Upstreams upstreams={upstreams} />
    </Layout>
  );
};
