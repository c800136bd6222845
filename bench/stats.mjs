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
