import { COUNTERS, type MetricEvent } from "./events";

/**
 * The production sink: one Analytics Engine data point per event. `writeDataPoint` returns at once
 * and the runtime ships the point after the answer, so nothing waits on it and no object is woken.
 * The tenant is the index, so sampling (at high volume only) is per tenant and never mixes two.
 *
 * Columns, read back by analytics-engine-sql.ts:
 * - index1: tenant
 * - blob1..blob4: namespace, tool, event kind, label (error code, `success` or approval state)
 * - double1..double20: the counters of events.ts, in that order (20 is Analytics Engine's limit)
 */
export function toDataPoint(event: MetricEvent): AnalyticsEngineDataPoint {
  return {
    indexes: [event.tenant],
    blobs: [event.namespace, event.tool, event.kind, event.label],
    doubles: COUNTERS.map((counter) => event.counts[counter]),
  };
}

export function writeToAnalyticsEngine(dataset: AnalyticsEngineDataset, event: MetricEvent): void {
  dataset.writeDataPoint(toDataPoint(event));
}
