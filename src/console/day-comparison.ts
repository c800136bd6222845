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

interface DayTotals {
  calls: number;
  succeeded: number;
  invalid: number;
  loops: number;
  escalations: number;
}

function sum(points: readonly MetricPoint[]): DayTotals {
  const totals = { calls: 0, succeeded: 0, invalid: 0, loops: 0, escalations: 0 };
  for (const point of points) {
    totals.calls += point.calls;
    totals.succeeded += point.succeeded;
    totals.invalid += point.invalid;
    totals.loops += point.loops;
    totals.escalations += point.escalations;
  }
  return totals;
}

const rate = (part: number, whole: number) => (whole > 0 ? part / whole : null);

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
    rates(
      "Success rate",
      rate(yesterday.succeeded, yesterday.calls),
      rate(today.succeeded, today.calls),
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
  ];
  return {
    namespace: series.namespace,
    measures,
    baseline,
    worse: measures.filter((measure) => measure.worse).map((measure) => measure.label),
  };
}
