import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_RATE_LIMITS, type RateLimitSettings } from "../../src/config/rate-settings";
import { parseTenants } from "../../src/config/tenants";
import { bucketOf, limiterOf } from "../../src/ratelimit/admission";
import { LeaseBucket, type LeaseRequest } from "../../src/ratelimit/lease-bucket";
import { leaseSize, RunRateGate } from "../../src/ratelimit/run-gate";
import { admit, type BucketLimit, fullBuckets, takeToken } from "../../src/ratelimit/token-bucket";
import { propertyPlans } from "../property-plan";
import { callTool, openRun, request, sandboxRequests, type TestRun } from "./helpers";

const plan = propertyPlans(env);

/** umbrella's limits in wrangler.toml: 3 calls per run, 5 per tenant, 4 run openings, per 60 s. */
const UMBRELLA_KEY = "umbrella-demo-key";
const WINDOW_MS = 60_000;

interface UmbrellaRun {
  id: string;
  token: string;
}

function openUmbrellaRun() {
  return request("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${UMBRELLA_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ namespace: "support" }),
  });
}

async function umbrellaRun(): Promise<UmbrellaRun> {
  const { status, body } = await openUmbrellaRun();
  expect(status, JSON.stringify(body.error)).toBe(201);
  const data = body.data as { run_id: string; run_token: string };
  return { id: data.run_id, token: data.run_token };
}

/** Order ids umbrella owns but the sandbox does not know: the call is dispatched and ends not_found. */
function lookup(run: UmbrellaRun, orderId: string) {
  return request(`/v1/runs/${run.id}/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${run.token}`, "content-type": "application/json" },
    body: JSON.stringify({ tool: "lookup_order", args: { order_id: orderId } }),
  });
}

async function statusOf(run: UmbrellaRun) {
  const { body } = await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } });
  return body.data as { used: { calls_used: number }; budget: { calls_left: number } };
}

const bucket = (key: string, limit: number): BucketLimit => ({ key, limit, window_ms: WINDOW_MS });

describe("token buckets (pure)", () => {
  it("admit `limit` requests at once, then say exactly when the next one fits", () => {
    const limit = bucket("run", 3);
    let tat: number | undefined;
    for (let index = 0; index < 3; index++) {
      const verdict = takeToken(tat, limit, 1_000);
      expect(verdict.ok).toBe(true);
      if (verdict.ok) tat = verdict.tat;
    }
    expect(takeToken(tat, limit, 1_000)).toEqual({ ok: false, retry_after_ms: 20_000 });
    expect(takeToken(tat, limit, 6_000)).toEqual({ ok: false, retry_after_ms: 15_000 });
  });

  it("refill one token every window / limit, never more than the limit", () => {
    const limit = bucket("run", 3);
    const drained = 1_000 + WINDOW_MS;
    expect(takeToken(drained, limit, 21_000).ok).toBe(true);
    expect(takeToken(drained, limit, 20_999).ok).toBe(false);
    // Idle for ten windows: still only `limit` at once.
    let tat: number | undefined = drained;
    let admitted = 0;
    for (let index = 0; index < 10; index++) {
      const verdict = takeToken(tat, limit, 1_000 + 10 * WINDOW_MS);
      if (verdict.ok) {
        admitted++;
        tat = verdict.tat;
      }
    }
    expect(admitted).toBe(3);
  });

  it("admit the last token of a bucket whose interval is not a whole number of ms", () => {
    const limit = bucket("run", 7);
    let tat: number | undefined;
    for (let index = 0; index < 7; index++) {
      const verdict = takeToken(tat, limit, 5);
      expect(verdict.ok, `request ${index + 1}`).toBe(true);
      if (verdict.ok) tat = verdict.tat;
    }
    expect(takeToken(tat, limit, 5).ok).toBe(false);
  });

  it("take from every bucket or from none", () => {
    const state = new Map([["run:r1", 1_000 + WINDOW_MS]]);
    const refused = admit(state, [bucket("run:r1", 3), bucket("calls", 5)], 1_000);
    expect(refused).toEqual({ ok: false, key: "run:r1", retry_after_ms: 20_000 });
    // The tenant bucket was not charged for the refused call.
    expect(state.has("calls")).toBe(false);
    const admitted = admit(state, [bucket("run:r2", 3), bucket("calls", 5)], 1_000);
    expect(admitted.ok && admitted.tats.map(([key]) => key)).toEqual(["run:r2", "calls"]);
  });

  it("name the bucket that stays empty longest when several refuse", () => {
    const state = new Map([
      ["run:r1", 1_000 + WINDOW_MS],
      ["calls", 1_000 + WINDOW_MS],
    ]);
    expect(admit(state, [bucket("run:r1", 3), bucket("calls", 5)], 1_000)).toMatchObject({
      ok: false,
      key: "run:r1",
      retry_after_ms: 20_000,
    });
  });

  it("forget only buckets that are full again", () => {
    const state = new Map([
      ["idle", 500],
      ["busy", 5_000],
    ]);
    expect(fullBuckets(state, 1_000)).toEqual(["idle"]);
  });
});

describe("rate-limit settings", () => {
  const tenant = {
    namespaces: ["support"],
    ceilings: { max_calls: 10, max_writes: 1, max_destructive: 1, deadline_s: 60 },
    max_refund_cents: 0,
  };

  it("give a tenant that configures none the defaults, and fill in what a tenant leaves out", () => {
    const tenants = parseTenants({ plain: tenant, tight: { ...tenant, rate_limits: { calls_per_run: 2 } } });
    expect(tenants.plain?.rate_limits).toEqual(DEFAULT_RATE_LIMITS);
    expect(tenants.tight?.rate_limits).toEqual({ ...DEFAULT_RATE_LIMITS, calls_per_run: 2 });
  });

  it("are generous enough for the load-test tenant and tiny for umbrella", () => {
    const tenants = parseTenants(env.TENANTS);
    expect(tenants.acme?.rate_limits).toEqual(DEFAULT_RATE_LIMITS);
    expect(tenants.umbrella?.rate_limits).toEqual({
      window_s: 60,
      calls_per_tenant: 5,
      calls_per_run: 3,
      runs_opened: 4,
    });
  });

  it("refuse a window longer than the limiter can remember, naming the path", () => {
    expect(() => parseTenants({ t: { ...tenant, rate_limits: { window_s: 3_600 } } })).toThrow(
      /TENANTS is invalid at "t.rate_limits.window_s"/,
    );
    expect(() => parseTenants({ t: { ...tenant, rate_limits: { calls_per_run: 0 } } })).toThrow(
      /rate_limits.calls_per_run/,
    );
  });
});

describe("the per-tenant limiter object", () => {
  it("never admits more than the bucket holds, however many requests arrive at once", async () => {
    const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`test-${crypto.randomUUID()}`));
    const limits = [bucket("run:r1", 5), bucket("calls", 100)];
    const answers = await Promise.all(Array.from({ length: 40 }, () => limiter.admit(limits)));
    expect(answers.filter((answer) => answer.ok)).toHaveLength(5);
  });
});

// These tests spend one tenant's buckets within one window, so they run in order and each builds on
// what the previous ones spent: run A 3 calls, run B 2 calls (tenant: 5 of 5), then 4 openings of 4.
describe.sequential("umbrella's limits within one window", () => {
  let runA: UmbrellaRun;
  let runB: UmbrellaRun;

  it("refuse a run's fourth call with 429, Retry-After and retry_after_ms, before the ledger", async () => {
    runA = await umbrellaRun();
    for (const order of ["U0001", "U0002", "U0003"]) {
      const { status, body } = await lookup(runA, order);
      expect(status, JSON.stringify(body.error)).not.toBe(429);
      expect(body.error?.code).toBe("not_found");
    }
    const { status, headers, body } = await lookup(runA, "U0004");
    expect(status).toBe(429);
    expect(body.outcome).toBe("retryable_failure");
    expect(body.error).toMatchObject({
      code: "rate_limited",
      retryable: true,
      recommended_next_action: "retry",
      side_effect_confirmed: false,
      details: { scope: "run_calls", limit: 3, window_s: 60 },
    });
    const retryAfterMs = body.error?.retry_after_ms ?? 0;
    expect(retryAfterMs).toBeGreaterThan(10_000);
    expect(retryAfterMs).toBeLessThanOrEqual(20_000);
    expect(headers.get("retry-after")).toBe(String(Math.ceil(retryAfterMs / 1000)));
    expect(body.error?.message).toMatch(/3 tool calls per 60 s.*spent no budget/);
  });

  it("answer the run's next calls at the edge while the wait lasts, without asking its ledger again", async () => {
    const ledger = env.RUN_LEDGER.get(env.RUN_LEDGER.idFromName(`umbrella/${runA.id}`));
    /** The ledger instance with its `call` counted: a test's view of an object it patches. */
    type Counted = { call: (...args: unknown[]) => unknown; calls?: number };
    await runInDurableObject(ledger, (object) => {
      const instance = object as unknown as Counted;
      const call = instance.call.bind(instance);
      instance.calls = 0;
      instance.call = (...args: unknown[]) => {
        instance.calls = (instance.calls ?? 0) + 1;
        return call(...args);
      };
    });
    const { status, body } = await lookup(runA, "U0004");
    expect(status).toBe(429);
    expect(body.error?.details).toEqual({ scope: "run_calls", limit: 3, window_s: 60 });
    expect(body.error?.retry_after_ms).toBeGreaterThan(0);
    const asked = await runInDurableObject(ledger, (object) => (object as unknown as Counted).calls);
    expect(asked).toBe(0);
  });

  it("spend no budget, write no trace entry and send nothing upstream for a refused call", async () => {
    const status = await statusOf(runA);
    expect(status.used.calls_used).toBe(3);
    expect(status.budget.calls_left).toBe(17);
    const trace = await request(`/v1/runs/${runA.id}/trace`, {
      headers: { authorization: `Bearer ${runA.token}` },
    });
    expect((trace.body.data as { entries: unknown[] }).entries).toHaveLength(3);
    const sent = await sandboxRequests(runA.id);
    expect(sent.map((entry) => entry.path)).toEqual(["/orders/U0001", "/orders/U0002", "/orders/U0003"]);
  });

  it("count every run of the tenant against the tenant's limit", async () => {
    runB = await umbrellaRun();
    for (const order of ["U0005", "U0006"]) expect((await lookup(runB, order)).status).not.toBe(429);
    // Run B has spent 2 of its 3, but the tenant has spent 5 of 5.
    const { status, body } = await lookup(runB, "U0007");
    expect(status).toBe(429);
    expect(body.error?.details).toEqual({ scope: "tenant_calls", limit: 5, window_s: 60 });
    expect(body.error?.message).toMatch(/across all its runs/);
    expect((await statusOf(runB)).used.calls_used).toBe(2);
  });

  it("limit how often a tenant opens runs", async () => {
    await umbrellaRun();
    await umbrellaRun();
    const { status, headers, body } = await openUmbrellaRun();
    expect(status).toBe(429);
    expect(body.error).toMatchObject({
      code: "rate_limited",
      details: { scope: "runs_opened", limit: 4, window_s: 60 },
    });
    expect(Number(headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("refuse a flood of one tenant while another tenant's calls go through untouched", async () => {
    const acme = await openRun("acme", { namespace: "support", limits: { max_calls: 50 } });
    const flood = Promise.all([
      ...Array.from({ length: 40 }, (_, index) => lookup(runB, `U1${String(index).padStart(3, "0")}`)),
      ...Array.from({ length: 10 }, () => openUmbrellaRun()),
    ]);
    const victim = Promise.all(
      ["A1001", "A1002", "A1003", "A1004", "A1005"].flatMap((order) => [
        callTool(acme, "lookup_order", { order_id: order }),
        callTool(acme, "lookup_order", { order_id: order }),
      ]),
    );
    const [flooded, served] = await Promise.all([flood, victim]);
    expect(served.map(({ status }) => status)).toEqual(Array(10).fill(200));
    // A token may have come back while the earlier tests ran (one every 12 s); no more than that.
    const refused = flooded.filter(
      ({ status, body }) => status === 429 && body.error?.code === "rate_limited",
    );
    expect(refused.length).toBeGreaterThanOrEqual(flooded.length - 1);
  });

  it("hold for MCP calls too: the same buckets refuse a tools/call, as a result the model can read", async () => {
    const client = new Client({ name: "rate-limit-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("https://proxy.test/mcp"), {
        fetch: (url, init) => exports.default.fetch(new Request(url, init)),
        requestInit: { headers: { authorization: `Bearer ${runB.token}` } },
      }),
    );
    const result = await client.callTool({ name: "lookup_order", arguments: { order_id: "U0009" } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: "rate_limited" } });
    expect((await statusOf(runB)).used.calls_used).toBe(2);
  });
});

/** `count` tasks, `width` at a time, in order. */
async function inBatches<T>(count: number, width: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += width) {
    const batch = Array.from({ length: Math.min(width, count - start) }, (_, offset) => task(start + offset));
    results.push(...(await Promise.all(batch)));
  }
  return results;
}

// acme keeps the default limits (1,200 calls per 60 s across its runs, 120 run openings); the flood
// test above spends 10 of its calls and one opening.
describe("a tenant's limit across many short runs", () => {
  it("admits one read each of 115 fresh runs under a limit of 1,200 calls per 60 s", async () => {
    const runs = await inBatches(115, 8, () => openRun("acme"));
    const answers = await inBatches(115, 8, (index) =>
      callTool(runs[index] as TestRun, "lookup_order", { order_id: "A1001" }),
    );
    const refused = answers.filter(({ status }) => status === 429);
    expect(refused.map(({ body }) => body.error?.message)).toEqual([]);
    expect(answers.map(({ status }) => status)).toEqual(Array(115).fill(200));
    // Each run held the one token it spent, not a share of the limit (the flood test's run, at most 32).
    const standing = await limiterOf(env, "acme").standing(bucketOf("tenant_calls", DEFAULT_RATE_LIMITS));
    expect(standing.held).toBeLessThanOrEqual(115 + 32);
    expect(standing.available).toBeGreaterThanOrEqual(1_200 - 115 - 32);
  }, 120_000);
});

describe("a run's lease of its tenant's calls", () => {
  it("goes back to the tenant's bucket when the run ends: unused tokens at once, spent ones held no more", async () => {
    const run = await openRun("globex");
    for (const order of ["G0001", "G0002", "G0003", "G0004"]) {
      expect((await callTool(run, "lookup_order", { order_id: order })).status).not.toBe(429);
    }
    const { status } = await request(`/v1/runs/${run.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.token}` },
    });
    expect(status).toBe(200);
    const settings = parseTenants(env.TENANTS).globex?.rate_limits ?? DEFAULT_RATE_LIMITS;
    const bucket = bucketOf("tenant_calls", settings);
    const standing = await limiterOf(env, "globex").standing(bucket);
    expect(standing.held).toBe(0);
    expect(standing.available).toBeGreaterThanOrEqual(bucket.limit - 4);
  });
});

/** A tenant bucket as the RateLimiter keeps it, counting how often it is asked. */
function tenantBucket(clock: () => number = Date.now) {
  let bucket: LeaseBucket | undefined;
  const source = {
    requests: 0,
    /** The most lease requests in flight at once. */
    overlap: 0,
    inFlight: 0,
    async lease(limit: BucketLimit, request: LeaseRequest) {
      source.requests++;
      source.overlap = Math.max(source.overlap, ++source.inFlight);
      // Answered a turn later, as a request to another object is: concurrent requests would overlap.
      await Promise.resolve();
      source.inFlight--;
      bucket ??= new LeaseBucket(limit, clock(), "test");
      return bucket.lease(limit, request, clock());
    },
  };
  return source;
}

const settingsWith = (overrides: Partial<RateLimitSettings>): RateLimitSettings => ({
  ...DEFAULT_RATE_LIMITS,
  ...overrides,
});

describe("a run's rate gate, leasing the tenant's tokens", () => {
  it("sizes leases at most about 1 % of the tenant's limit, one at a time for tight limits", () => {
    expect(leaseSize(5)).toBe(1);
    expect(leaseSize(1_200)).toBe(12);
    expect(leaseSize(1_000_000)).toBe(32);
  });

  it("asks the tenant's limiter once per lease, leases doubling from one token while a run is busy", async () => {
    const source = tenantBucket();
    const gate = new RunRateGate(
      "run_a",
      () => settingsWith({ calls_per_tenant: 100_000, calls_per_run: 1_000 }),
      () => source,
    );
    for (let call = 0; call < 100; call++) expect(await gate.take()).toBeNull();
    // 1 + 2 + 4 + 8 + 16 + 32 + 32 + 32 tokens cover 100 calls.
    expect(source.requests).toBe(8);
  });

  it("lets concurrent calls of a run wait for one lease request at a time", async () => {
    const source = tenantBucket();
    const gate = new RunRateGate(
      "run_a",
      () => settingsWith({ calls_per_tenant: 100_000, calls_per_run: 1_000 }),
      () => source,
    );
    const answers = await Promise.all(Array.from({ length: 20 }, () => gate.take()));
    expect(answers.every((answer) => answer === null)).toBe(true);
    // One token first; the others wait for it, then share the leases that follow, one at a time.
    expect(source.overlap).toBe(1);
    expect(source.requests).toBeLessThanOrEqual(6);
  });

  it("never admits more calls than the tenant's limit, whatever the runs and their order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 400 }),
        fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 600 }),
        async (tenantLimit, order) => {
          const now = Date.now();
          const source = tenantBucket(() => now);
          const settings = () => settingsWith({ calls_per_tenant: tenantLimit, calls_per_run: 1_000_000 });
          const gates = Array.from(
            { length: 8 },
            (_, index) =>
              new RunRateGate(
                `run_${index}`,
                settings,
                () => source,
                () => now,
              ),
          );
          let admitted = 0;
          for (const pick of order) if ((await (gates[pick] as RunRateGate).take()) === null) admitted++;
          expect(admitted).toBeLessThanOrEqual(tenantLimit);
          // Early refusals are bounded by the tokens stranded in other runs' leases.
          expect(admitted).toBeGreaterThanOrEqual(
            Math.min(order.length, tenantLimit - 7 * (leaseSize(tenantLimit) - 1)),
          );
        },
      ),
      plan({ seed: 16_003, numRuns: 60 }),
    );
  });

  it("refuses by the run's own bucket without leasing, and fails closed when the limiter is unreachable", async () => {
    const source = tenantBucket();
    const tight = new RunRateGate(
      "run_t",
      () => settingsWith({ calls_per_run: 1 }),
      () => source,
    );
    expect(await tight.take()).toBeNull();
    const requests = source.requests;
    expect(await tight.take()).toMatchObject({ code: "rate_limited", details: { scope: "run_calls" } });
    expect(source.requests).toBe(requests);

    const broken = new RunRateGate(
      "run_b",
      () => DEFAULT_RATE_LIMITS,
      () => ({
        lease: () => Promise.reject(new Error("limiter reset")),
      }),
    );
    expect(await broken.take()).toMatchObject({ code: "transient_error", retry_after_ms: 1_000 });
  });
});
