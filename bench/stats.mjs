// The bench's arithmetic, with no I/O: percentiles, paired differences, the order in which
// interleaved series and throughput batches run, and batches summed over their rounds.

/** The value at percentile `p` (0-100) of ascending `sorted`, nearest rank; NaN when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** `{ n, p50, p99, mean }` of samples in milliseconds. */
export function summarise(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length === 0 ? Number.NaN : sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
  };
}

/**
 * The per-round difference `measured[i] - baseline[i]`, summarised: the p99 of what one request adds
 * over its pair in the same round, not the difference of two p99s (which pairs unrelated samples and
 * swings with whichever series drew the slow round).
 */
export function pairedDifference(baseline, measured) {
  if (baseline.length !== measured.length) {
    throw new Error(`paired series differ in length: ${baseline.length} and ${measured.length}`);
  }
  return summarise(measured.map((value, index) => value - baseline[index]));
}

/** The order of a pair within round `round`: alternating, so neither always goes first. */
export function pairOrder(round, [first, second]) {
  return round % 2 === 0 ? [first, second] : [second, first];
}

/**
 * Round-robin schedule of `rounds` rounds over `names`: each round runs every name once, starting one
 * further along than the round before, so drift on the machine reaches every batch alike and no
 * batch always follows the same one. Returns `{ round, name }` in running order.
 */
export function roundRobin(names, rounds) {
  const schedule = [];
  for (let round = 0; round < rounds; round++) {
    for (let step = 0; step < names.length; step++) {
      schedule.push({ round, name: names[(round + step) % names.length] });
    }
  }
  return schedule;
}

/**
 * One batch kind's rounds summed: requests (resends included) over the time and CPU of all its
 * rounds, and the spread of its per-round rates.
 */
export function combineRounds(rounds) {
  const requests = rounds.reduce((sum, round) => sum + round.requests, 0);
  const seconds = rounds.reduce((sum, round) => sum + round.seconds, 0);
  const cpu = rounds.every((round) => typeof round.cpu_ms === "number")
    ? rounds.reduce((sum, round) => sum + round.cpu_ms, 0)
    : null;
  const rates = rounds.map((round) => round.requests / round.seconds);
  return {
    rounds: rounds.length,
    requests,
    seconds,
    per_s: seconds > 0 ? requests / seconds : Number.NaN,
    per_s_min: Math.min(...rates),
    per_s_max: Math.max(...rates),
    cpu_ms_per_request: cpu === null || requests === 0 ? null : cpu / requests,
  };
}

/**
 * CPU time a V8 CPU profile spent outside `(idle)`, in milliseconds. A sample lasts until the next
 * one (as DevTools counts it); the wait before the first sample belongs to no one. The last sample
 * has no next one, and what follows it until the profile's end is the profiler being stopped: in
 * `wrangler check startup`, the answer of its wrapper (whose `new Response` is often that sample)
 * going back to wrangler and wrangler's stop command coming in, while the isolate does nothing and
 * the sampler records nothing. It counts as one typical interval (the median of the others), not
 * as the whole tail.
 */
export function busyMs(profile) {
  const idle = new Set(
    profile.nodes.filter((node) => node.callFrame.functionName === "(idle)").map((node) => node.id),
  );
  let at = profile.startTime;
  const times = profile.timeDeltas.map((delta) => {
    at += delta;
    return at;
  });
  const intervals = times.slice(1).map((time, index) => time - (times[index] ?? time));
  const typical = intervals.length > 0 ? summarise(intervals).p50 : 0;
  let busy = 0;
  profile.samples.forEach((node, index) => {
    const next = times[index + 1];
    const start = times[index] ?? profile.endTime;
    const lasted = next === undefined ? Math.min(profile.endTime - start, typical) : next - start;
    if (!idle.has(node)) busy += lasted;
  });
  return busy / 1000;
}
