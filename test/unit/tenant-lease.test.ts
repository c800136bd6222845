import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_RATE_LIMITS, type RateLimitSettings } from "../../src/config/rate-settings";
import { LeaseBucket, type LeaseRequest, leaseTerm } from "../../src/ratelimit/lease-bucket";
import { leaseSize, nextLeaseSize, RunRateGate } from "../../src/ratelimit/run-gate";
import { type BucketLimit, takeToken } from "../../src/ratelimit/token-bucket";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);

/** One tenant's bucket and its runs' gates on one clock the test moves. */
function tenant(settings: RateLimitSettings) {
  const clock = { now: 1_000_000 };
  const now = () => clock.now;
  let bucket: LeaseBucket | undefined;
  const limit: BucketLimit = {
    key: "calls",
    limit: settings.calls_per_tenant,
    window_ms: settings.window_s * 1000,
  };
  const source = {
    async lease(asked: BucketLimit, request: LeaseRequest) {
      bucket ??= new LeaseBucket(asked, now(), "epoch");
      return bucket.lease(asked, request, now());
    },
  };
  const gate = (runId: string) =>
    new RunRateGate(
      runId,
      () => settings,
      () => source,
      now,
    );
  const standing = () => bucket?.standing(now()) ?? { available: limit.limit, held: 0 };
  return { clock, limit, gate, standing, source };
}

const settingsWith = (overrides: Partial<RateLimitSettings>): RateLimitSettings => ({
  ...DEFAULT_RATE_LIMITS,
  ...overrides,
});

/** Whether calls at these times (in order) fit an exact token bucket of the limit, full at the start. */
function conforming(
  times: number[],
  limit: BucketLimit,
): { ok: true } | { ok: false; at: number; call: number } {
  let tat: number | undefined;
  for (const [call, at] of times.entries()) {
    const verdict = takeToken(tat, limit, at);
    if (!verdict.ok) return { ok: false, at, call };
    tat = verdict.tat;
  }
  return { ok: true };
}

describe("a tenant's lease bucket", () => {
  it("admits one call each of 115 fresh runs under 1,200 per 60 s, holding one token per run", async () => {
    const { gate, standing } = tenant(DEFAULT_RATE_LIMITS);
    const answers = await Promise.all(Array.from({ length: 115 }, (_, index) => gate(`run_${index}`).take()));
    expect(answers.filter((answer) => answer !== null)).toEqual([]);
    expect(standing()).toEqual({ available: 1_200 - 115, held: 115 });
  });

  it("gives a run's unused tokens back when the run ends, and its spent ones stop being held", async () => {
    const { gate, standing } = tenant(settingsWith({ calls_per_tenant: 1_000 }));
    const run = gate("run_a");
    for (let call = 0; call < 4; call++) expect(await run.take()).toBeNull();
    // Leases of 1, 2 and 4 tokens: 3 of the last one unused.
    expect(standing()).toEqual({ available: 1_000 - 7, held: 4 });
    await run.release();
    expect(standing()).toEqual({ available: 1_000 - 4, held: 0 });
  });

  it("counts a lease its run never reports as spent when its term ends, and refills from then", async () => {
    const settings = settingsWith({ calls_per_tenant: 600, window_s: 60 });
    const { clock, limit, gate, standing } = tenant(settings);
    const evicted = gate("run_a");
    for (let call = 0; call < 3; call++) expect(await evicted.take()).toBeNull();
    // Leases of 1 and 2 tokens spent and reported; a third of 4, one spent, when the run's object goes away.
    expect(await evicted.take()).toBeNull();
    expect(standing()).toEqual({ available: 600 - 7, held: 4 });
    // Held tokens count against the bucket: it refills only up to the limit less them.
    clock.now += leaseTerm(limit) - 1;
    expect(standing()).toEqual({ available: 600 - 4, held: 4 });
    clock.now += 1;
    expect(standing()).toEqual({ available: 600 - 4, held: 0 });
    const interval = limit.window_ms / limit.limit;
    clock.now += 4 * interval - 1;
    expect(standing().available).toBe(599);
    clock.now += 1;
    expect(standing()).toEqual({ available: 600, held: 0 });
    // The same run, restarted, leases afresh: its old lease's report would match nothing.
    expect(await gate("run_a").take()).toBeNull();
    expect(standing()).toEqual({ available: 599, held: 1 });
  });

  it("never lets a run spend a lease past its term, when the bucket has counted it back", async () => {
    const { clock, limit, gate, source } = tenant(settingsWith({ calls_per_tenant: 200, window_s: 1 }));
    const run = gate("run_a");
    // Leases of 1 and 2 tokens: one left unspent.
    expect(await Promise.all([run.take(), run.take()])).toEqual([null, null]);
    // The lease's term and two refill intervals later, the bucket is full again.
    clock.now += leaseTerm(limit) + 10;
    // Another holder takes every token the bucket has at this moment.
    const all = await source.lease(limit, { holder: "run_b", lease: null, unused: 0, want: 1_000 });
    expect(all.granted).toBe(200);
    expect(await run.take()).toMatchObject({ code: "rate_limited", details: { scope: "tenant_calls" } });
  });

  it("ignores a report of a lease by anyone but its holder", () => {
    const limit: BucketLimit = { key: "calls", limit: 10, window_ms: 60_000 };
    const bucket = new LeaseBucket(limit, 0, "e");
    const granted = bucket.lease(limit, { holder: "run_a", lease: null, unused: 0, want: 5 }, 0);
    expect(granted).toMatchObject({ granted: 5, lease: "e.1", term_ms: 5_000 });
    bucket.lease(limit, { holder: "run_b", lease: "e.1", unused: 5, want: 0 }, 0);
    expect(bucket.standing(0)).toEqual({ available: 5, held: 5 });
    bucket.lease(limit, { holder: "run_a", lease: "e.1", unused: 99, want: 0 }, 0);
    expect(bucket.standing(0)).toEqual({ available: 10, held: 0 });
  });

  it("says when the next token comes, counting leases that end before then", () => {
    const limit: BucketLimit = { key: "calls", limit: 2, window_ms: 60_000 };
    const bucket = new LeaseBucket(limit, 0, "e");
    bucket.lease(limit, { holder: "run_a", lease: null, unused: 0, want: 2 }, 0);
    // Both tokens held: none refills until the lease's term (5 s) ends, then one every 30 s.
    expect(bucket.lease(limit, { holder: "run_b", lease: null, unused: 0, want: 1 }, 0)).toMatchObject({
      granted: 0,
      retry_after_ms: 35_000,
    });
    expect(bucket.lease(limit, { holder: "run_b", lease: null, unused: 0, want: 1 }, 34_999).granted).toBe(0);
    expect(bucket.lease(limit, { holder: "run_b", lease: null, unused: 0, want: 1 }, 35_000).granted).toBe(1);
  });

  it("lets a steady run of a call every 800 ms ask the tenant's object about once a term, holding a few tokens", async () => {
    const { clock, gate, source, standing } = tenant(DEFAULT_RATE_LIMITS);
    let leases = 0;
    const lease = source.lease.bind(source);
    source.lease = (asked, request) => {
      leases++;
      return lease(asked, request);
    };
    const run = gate("run_steady");
    for (let call = 0; call < 30; call++) {
      expect(await run.take()).toBeNull();
      clock.now += 800;
    }
    // Leases of 1, 2, 4, then 4 at a time (4 calls take 3.2 s, more than half a term): 9 for 30
    // calls, where growing only within a second (1, 2, 2, ...) asked 16 times.
    expect(leases).toBe(9);
    expect(standing().held).toBeLessThanOrEqual(4);
  });

  it("sizes a run's next lease by how it spent the last", () => {
    const last = { granted: 8, unused: 0, held_ms: 200, term_ms: 5_000, expired: false };
    expect(nextLeaseSize(8, last, 32)).toBe(16);
    expect(nextLeaseSize(8, last, 12)).toBe(12);
    // Spent within half its term, it doubles; in more, it stays: a steady run's lease lasts about a term.
    expect(nextLeaseSize(8, { ...last, held_ms: 2_500 }, 32)).toBe(16);
    expect(nextLeaseSize(8, { ...last, held_ms: 3_000 }, 32)).toBe(8);
    // A shorter term (a window under 5 s) halves with it.
    expect(nextLeaseSize(8, { ...last, held_ms: 1_500, term_ms: 2_000 }, 32)).toBe(8);
    expect(nextLeaseSize(8, { ...last, unused: 6, held_ms: 6_000, expired: true }, 32)).toBe(2);
    expect(nextLeaseSize(8, { ...last, unused: 8, held_ms: 6_000, expired: true }, 32)).toBe(1);
    expect(leaseSize(5)).toBe(1);
  });
});

type Step =
  | { kind: "call"; run: number; calls: number }
  | { kind: "tick"; ms: number }
  | { kind: "end"; run: number }
  | { kind: "evict"; run: number }
  | { kind: "burst" };

const RUNS = 4;
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("call" as const),
      run: fc.nat(RUNS - 1),
      calls: fc.integer({ min: 1, max: 8 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("tick" as const),
      ms: fc.oneof(fc.nat(100), fc.integer({ min: 4_000, max: 8_000 })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("end" as const), run: fc.nat(RUNS - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("evict" as const), run: fc.nat(RUNS - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("burst" as const) }) },
);

describe("a tenant's runs leasing its bucket (property)", () => {
  it("never admit faster than the limit, and leave the bucket full once every run has ended", async () => {
    await fc.assert(
      fc.asyncProperty(
        // Tight limits lease one token at a time; from 200 a lease may hold several.
        fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 200, max: 400 })),
        fc.constantFrom(1, 10, 60),
        fc.array(step, { minLength: 1, maxLength: 400 }),
        async (calls_per_tenant, window_s, steps) => {
          const { clock, limit, gate, standing, source } = tenant(
            settingsWith({ calls_per_tenant, window_s, calls_per_run: 1_000_000 }),
          );
          let fresh = 0;
          const gates = Array.from({ length: RUNS }, () => ({
            id: `run_${fresh}`,
            gate: gate(`run_${fresh++}`),
          }));
          const admitted: number[] = [];
          for (const next of steps) {
            const slot = "run" in next ? gates[next.run] : undefined;
            if (next.kind === "tick") clock.now += next.ms;
            else if (next.kind === "call" && slot) {
              // Calls of one run at one moment, concurrent: they share its leases.
              const verdicts = await Promise.all(Array.from({ length: next.calls }, () => slot.gate.take()));
              for (const verdict of verdicts) {
                if (verdict === null) admitted.push(clock.now);
                else
                  expect(verdict.details).toMatchObject({ scope: "tenant_calls", limit: calls_per_tenant });
              }
            } else if (next.kind === "end" && slot) {
              await slot.gate.release();
              slot.id = `run_${fresh++}`;
              slot.gate = gate(slot.id);
            } else if (next.kind === "burst") {
              // A holder that takes every token there is at once and spends them all at once.
              const all = { holder: "burst", lease: null, unused: 0, want: 1_000_000 };
              const grant = await source.lease(limit, all);
              for (let token = 0; token < grant.granted; token++) admitted.push(clock.now);
              await source.lease(limit, { ...all, lease: grant.lease, want: 0 });
            } else if (next.kind === "evict" && slot) {
              // The ledger's memory is gone; the same run's next call meets a new gate.
              slot.gate = gate(slot.id);
            }
          }
          expect(conforming(admitted, limit)).toEqual({ ok: true });
          for (const slot of gates) await slot.gate.release();
          // Evicted runs' leases end with their term; then the bucket refills completely.
          clock.now += leaseTerm(limit);
          expect(standing().held).toBe(0);
          clock.now += limit.window_ms;
          expect(standing()).toEqual({ available: calls_per_tenant, held: 0 });
        },
      ),
      plan({ seed: 30_001, numRuns: 300 }),
    );
  });
});
