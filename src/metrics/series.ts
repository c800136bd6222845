import { BUCKET_MS, type MetricBucket, type MetricCounts, type MetricSeries } from "../wire/metrics";
import { addCounts, type Counts, callsAnswered, zeroCounts } from "./events";

/** One bucket of one namespace as a reader returns it: sums of the counters. */
export interface MetricRow {
  /** The bucket's start, epoch milliseconds. */
  t: number;
  namespace: string;
  counts: Counts;
}

/** A range cut into whole buckets: `since` floored to a bucket's start, `until` exclusive. */
export interface BucketRange {
  since: number;
  until: number;
  bucket: MetricBucket;
}

export function alignRange(since: number, until: number, bucket: MetricBucket): BucketRange {
  const step = BUCKET_MS[bucket];
  return { since: Math.floor(since / step) * step, until, bucket };
}

/** The start of every bucket of the range, oldest first. */
export function bucketStarts(range: BucketRange): number[] {
  const step = BUCKET_MS[range.bucket];
  const starts: number[] = [];
  for (let t = range.since; t < range.until; t += step) starts.push(t);
  return starts;
}

const ratio = (part: number, whole: number) => (whole > 0 ? part / whole : null);

/** The counters with the rates an operator reads: success, invalid calls, the average wait. */
export function withRates(counts: Counts): MetricCounts {
  return {
    ...counts,
    // A call waiting for a human is not a failure: it is left out of the success rate's whole.
    success_rate: ratio(counts.succeeded, callsAnswered(counts)),
    invalid_rate: ratio(counts.invalid, counts.calls),
    avg_approval_wait_ms: ratio(counts.approval_wait_ms_total, counts.approvals_decided),
    approval_trigger_rate: ratio(counts.approvals_asked, counts.high_risk_calls),
    approval_bypass_rate: ratio(counts.approval_bypasses, counts.high_risk_calls),
    idempotency_conflict_rate: ratio(counts.idempotency_conflicts, counts.high_risk_calls),
    side_effect_replay_rate: ratio(counts.duplicates_prevented, counts.high_risk_calls),
  };
}

/**
 * Rows of any reader as one series per namespace: every bucket of the range present (an empty one
 * counts 0, so a chart's x axis is time, not the events that happened), with totals. `namespaces`
 * are listed even without a single event; a namespace only the rows know is added after them.
 */
export function toSeries(
  rows: readonly MetricRow[],
  range: BucketRange,
  namespaces: readonly string[],
): MetricSeries[] {
  const starts = bucketStarts(range);
  const step = BUCKET_MS[range.bucket];
  const byNamespace = new Map<string, Map<number, Counts>>(
    namespaces.map((namespace) => [namespace, new Map()]),
  );
  for (const row of rows) {
    const t = Math.floor(row.t / step) * step;
    if (t < range.since || t >= range.until) continue;
    let buckets = byNamespace.get(row.namespace);
    if (!buckets) {
      buckets = new Map();
      byNamespace.set(row.namespace, buckets);
    }
    buckets.set(t, addCounts(buckets.get(t) ?? zeroCounts(), row.counts));
  }
  return [...byNamespace].map(([namespace, buckets]) => {
    const totals = zeroCounts();
    const points = starts.map((t) => {
      const counts = buckets.get(t) ?? zeroCounts();
      addCounts(totals, counts);
      return { t: new Date(t).toISOString(), ...withRates(counts) };
    });
    return { namespace, totals: withRates(totals), points };
  });
}
