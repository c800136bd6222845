import { describe, expect, it } from "vitest";
import {
  busyMs,
  type CpuProfile,
  combineRounds,
  pairedDifference,
  pairOrder,
  percentile,
  roundRobin,
} from "../../bench/stats.mjs";

describe("the bench's paired difference", () => {
  it("takes the p99 of per-round differences, where the difference of p99s hides the proxied spikes", () => {
    // 100 rounds: the direct read is slow in rounds 0-1, the proxied read in rounds 2-3.
    const direct = Array.from({ length: 100 }, (_, round) => (round < 2 ? 50 : 1));
    const proxied = Array.from({ length: 100 }, (_, round) => (round === 2 || round === 3 ? 51 : 2));
    const paired = pairedDifference(direct, proxied);
    expect(paired.p50).toBe(1);
    expect(paired.p99).toBe(50);
    expect(paired.n).toBe(100);
    // The difference of the two p99s pairs the direct read's spikes with the proxied read's: 1.
    const p99 = (values: number[]) =>
      percentile(
        [...values].sort((a, b) => a - b),
        99,
      );
    expect(p99(proxied) - p99(direct)).toBe(1);
  });

  it("sees a difference that shows in one round in a hundred only at its p99 when it is the top 1 %", () => {
    const direct = Array.from({ length: 200 }, () => 1);
    const proxied = Array.from({ length: 200 }, (_, round) => (round < 3 ? 11 : 2));
    expect(pairedDifference(direct, proxied).p99).toBe(10);
  });

  it("refuses series of different lengths", () => {
    expect(() => pairedDifference([1, 2], [1])).toThrow(/differ in length: 2 and 1/);
  });

  it("reads percentiles by nearest rank, NaN when there is nothing", () => {
    const sorted = Array.from({ length: 100 }, (_, index) => index + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile([], 50)).toBeNaN();
  });

  it("alternates which of a pair goes first", () => {
    expect(pairOrder(0, ["direct", "proxied"])).toEqual(["direct", "proxied"]);
    expect(pairOrder(1, ["direct", "proxied"])).toEqual(["proxied", "direct"]);
    expect(pairOrder(2, ["direct", "proxied"])).toEqual(["direct", "proxied"]);
  });
});

describe("the bench's round-robin throughput schedule", () => {
  it("runs every batch once a round, each round starting one batch further along", () => {
    const schedule = roundRobin(["direct", "one", "many", "replay"], 3);
    expect(schedule.map(({ name }) => name)).toEqual([
      ...["direct", "one", "many", "replay"],
      ...["one", "many", "replay", "direct"],
      ...["many", "replay", "direct", "one"],
    ]);
    expect(schedule.map(({ round }) => round)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
  });

  it("puts every batch at every place of a round once over as many rounds as batches", () => {
    const names = ["direct", "one", "many", "replay"];
    const schedule = roundRobin(names, names.length);
    for (const name of names) {
      const places = schedule.flatMap((step, index) => (step.name === name ? [index % names.length] : []));
      expect(places.sort()).toEqual([0, 1, 2, 3]);
    }
  });

  it("sums a batch's rounds: requests over time, CPU over requests, the spread of rates", () => {
    const batch = combineRounds([
      { requests: 300, seconds: 1, cpu_ms: 600 },
      { requests: 100, seconds: 1, cpu_ms: 200 },
    ]);
    expect(batch.per_s).toBe(200);
    expect(batch.cpu_ms_per_request).toBe(2);
    expect([batch.per_s_min, batch.per_s_max]).toEqual([100, 300]);
    expect(combineRounds([{ requests: 10, seconds: 1 }]).cpu_ms_per_request).toBeNull();
  });
});

/**
 * A profile as `wrangler check startup` writes it, in microseconds: an idle wait, then a sample
 * every `interval` in the given frames, then nothing until the profile's end, `tail` later.
 */
function startupProfile(frames: string[], interval: number, tail: number): CpuProfile {
  const names = ["(idle)", ...new Set(frames)];
  const nodes = names.map((functionName, index) => ({ id: index + 1, callFrame: { functionName } }));
  const idOf = (name: string) => names.indexOf(name) + 1;
  const samples = [idOf("(idle)"), ...frames.map(idOf)];
  // The idle wait lasts 4 ms; each sample after it, `interval`.
  const timeDeltas = [0, 4_000, ...frames.slice(1).map(() => interval)];
  const startTime = 1_000_000;
  const last = startTime + timeDeltas.reduce((sum, delta) => sum + delta, 0);
  return { nodes, startTime, endTime: last + tail, samples, timeDeltas };
}

describe("the bench's startup CPU", () => {
  it("counts each sample until the next, and neither the idle wait nor the profiler's stop after the last", () => {
    const frames = ["evaluate", "zod", "zod", "Response"];
    // The stop came 30 ms after the last sample: that sample counts as one interval, 1 ms.
    expect(busyMs(startupProfile(frames, 1_000, 30_000))).toBe(4);
    // A stop sooner than one interval counts as it came.
    expect(busyMs(startupProfile(frames, 1_000, 400))).toBe(3.4);
    // A last sample that is idle counts nothing, however long the tail.
    expect(busyMs(startupProfile([...frames, "(idle)"], 1_000, 30_000))).toBe(4);
  });
});
