import { callsAnswered } from "../metrics/events";
import type { MetricPoint, MetricSeries } from "../wire/metrics";

/** How a measure moved from yesterday to today, and whether that is bad news. */
export interface ComparedMeasure {
  label: string;
  yesterday: number | null;
  today: number | null;
  kind: "count" | "rate";
  /** Higher is worse (invalid rate, loops), lower is worse (success rate), or neither (calls). */
  worse: boolean;
}

export interface DayComparison {
  namespace: string;
  measures: ComparedMeasure[];
  /**
   * Whether yesterday had any data to compare with: without it nothing is judged worse (a loop today
   * against an empty yesterday is "no baseline yet", not "worse than yesterday").
   */
  baseline: boolean;
  /** The labels of the measures that got worse; empty without a baseline. */
  worse: string[];
}

const SUMMED = [
  "calls",
  "succeeded",
  "invalid",
  "loops",
  "escalations",
  "high_risk_calls",
  "approvals_asked",
  "approval_bypasses",
  "idempotency_conflicts",
  "duplicates_prevented",
] as const;
type DayTotals = Record<(typeof SUMMED)[number], number>;

function sum(points: readonly MetricPoint[]): DayTotals {
  const totals = Object.fromEntries(SUMMED.map((name) => [name, 0])) as DayTotals;
  for (const point of points) for (const name of SUMMED) totals[name] += point[name];
  return totals;
}

const rate = (part: number, whole: number) => (whole > 0 ? part / whole : null);

/** The four high-risk rates, each a share of high-risk calls: label and numerator. */
const HIGH_RISK_RATES = [
  ["Approval trigger rate", "approvals_asked"],
  ["Approval bypass rate", "approval_bypasses"],
  ["Idempotency conflict rate", "idempotency_conflicts"],
  ["Side-effect replay rate", "duplicates_prevented"],
] as const;

/**
 * Today against yesterday for one namespace: the buckets from `split` on are today, those before
 * it yesterday. Only a yesterday with data is a baseline: without one nothing is judged. A rate
 * compares only when both days had calls; a count got worse when it grew.
 */
export function compareDays(series: MetricSeries, split: number): DayComparison {
  const yesterday = sum(series.points.filter((point) => Date.parse(point.t) < split));
  const today = sum(series.points.filter((point) => Date.parse(point.t) >= split));
  const baseline = Object.values(yesterday).some((total) => total > 0);
  const rates = (
    label: string,
    y: number | null,
    t: number | null,
    higherIsWorse: boolean,
  ): ComparedMeasure => ({
    label,
    yesterday: y,
    today: t,
    kind: "rate",
    worse: baseline && y !== null && t !== null && (higherIsWorse ? t > y : t < y),
  });
  const counts = (label: string, y: number, t: number, judged: boolean): ComparedMeasure => ({
    label,
    yesterday: y,
    today: t,
    kind: "count",
    worse: baseline && judged && t > y,
  });
  const measures = [
    counts("Calls", yesterday.calls, today.calls, false),
    // Calls waiting for a human are neither success nor failure (metrics/events.ts).
    rates(
      "Success rate",
      rate(yesterday.succeeded, callsAnswered(yesterday)),
      rate(today.succeeded, callsAnswered(today)),
      false,
    ),
    rates(
      "Invalid-call rate",
      rate(yesterday.invalid, yesterday.calls),
      rate(today.invalid, today.calls),
      true,
    ),
    counts("Loops", yesterday.loops, today.loops, true),
    counts("Escalations", yesterday.escalations, today.escalations, true),
    // The high-risk rates: shares of the draft, write and destructive calls.
    ...HIGH_RISK_RATES.map(([label, part]) =>
      rates(
        label,
        rate(yesterday[part], yesterday.high_risk_calls),
        rate(today[part], today.high_risk_calls),
        true,
      ),
    ),
  ];
  return {
    namespace: series.namespace,
    measures,
    baseline,
    worse: measures.filter((measure) => measure.worse).map((measure) => measure.label),
  };
}
