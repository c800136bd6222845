import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { MetricsStore, MinuteDelta } from "../../src/ledger/metrics-store";
import { alertWebhookId, windowOf } from "../../src/metrics/alerts";
import { type Counts, zeroCounts } from "../../src/metrics/events";
import { type FiringAlert, MetricsReportSchema } from "../../src/wire/metrics";
import { signedInOperator } from "./console-client";
import { asOperator, callTool, failWebhookDeliveries, openRun, sandbox, type TestRun } from "./helpers";

/** hooli's alert in wrangler.toml: invalid calls above 50 % of at least 20 calls in a clock hour. */
const THRESHOLD = 0.5;
const MIN_SAMPLE = 20;

type Delivery = {
  verified: boolean;
  webhook_id: string | null;
  body: { type: string; tenant: string; alert?: FiringAlert; console_path?: string };
};
type Rejection = { webhook_id: string | null; code: string };

/** The loopback receiver: the sandbox upstream records every verified delivery of the webhook. */
const hooks = () => sandbox<{ notifications: Delivery[]; rejections: Rejection[] }>("/_admin/notifications");
const alertHooks = async (id: string) =>
  (await hooks()).notifications.filter((entry) => entry.webhook_id === id);

/** hooli's alerts firing now, through `GET /v1/metrics`. */
async function firing(): Promise<FiringAlert[]> {
  const { status, body } = await asOperator("/v1/metrics", {}, "hooli");
  expect(status, JSON.stringify(body.error)).toBe(200);
  return MetricsReportSchema.parse(body.data).alerts;
}

function store(): DurableObjectStub<MetricsStore> {
  const namespace = env.METRICS_STORE;
  if (!namespace) throw new Error("the sandbox binds METRICS_STORE");
  return namespace.get(namespace.idFromName("hooli"));
}

const invalid = (run: TestRun) => callTool(run, "lookup_order", { orderId: "H0001" });
const valid = (run: TestRun) => callTool(run, "lookup_order", { order_id: "H0002" });

/** Counts are batched per isolate and written after the answer: poll until they have landed. */
const landed = { timeout: 15_000, interval: 200 };

const HOUR_MS = 60 * 60_000;
/** How far from its window's end a test's steps start: far more than the few seconds they take. */
const MARGIN_MS = 3 * 60_000;

/**
 * hooli's window is the clock hour: steps that ran across an hour's end would be counted in two
 * windows. The proxy and its stores run in this isolate and read its clock (Date.now), so when
 * fewer than MARGIN_MS are left in the hour, the test moves that clock on to the next hour's start.
 * Forward, never back: the upstream, on its own clock, refuses a credential that expired there.
 * The clock still advances in real time.
 */
function clockClearOfWindowEnd(): void {
  const real = Date.now.bind(Date);
  const left = HOUR_MS - (real() % HOUR_MS);
  const offset = left < MARGIN_MS ? left : 0;
  vi.spyOn(Date, "now").mockImplementation(() => real() + offset);
}

/** hooli's invalid calls counted in one minute (epoch minutes) of the support namespace. */
function invalidCalls(minute: number, calls: number): MinuteDelta {
  const counts: Counts = { ...zeroCounts(), calls, invalid: calls };
  return { minute, namespace: "support", tool: "lookup_order", counts };
}

/** The store's owed and sent alert webhooks, oldest window first. */
const deliveries = () =>
  runInDurableObject(store(), (_instance, state) =>
    state.storage.sql
      .exec<{ webhook_id: string; attempts: number; outcome: string | null }>(
        "SELECT webhook_id, attempts, outcome FROM alert_deliveries ORDER BY window_start",
      )
      .toArray(),
  );

describe("alerts on the health rates", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("sends one signed webhook when invalid calls cross the threshold, none on a second crossing in the window, and shows the alert until the rate recovers", async () => {
    clockClearOfWindowEnd();
    const run = await openRun("hooli", { namespace: "support", limits: { max_calls: 200 } });
    expect(await firing()).toEqual([]);

    // 20 invalid calls of 20: the window holds enough calls to judge, and the rate is 100 %.
    for (let call = 0; call < MIN_SAMPLE; call++)
      expect((await invalid(run)).body.error?.code).toBe("validation_error");
    const fired = await vi.waitFor(async () => {
      const alerts = await firing();
      expect(alerts).toHaveLength(1);
      return alerts[0] as FiringAlert;
    }, landed);
    expect(fired).toMatchObject({
      rate: "invalid_calls",
      fires: "above",
      threshold: THRESHOLD,
      window_minutes: 60,
    });
    expect(fired.value).toBeGreaterThan(THRESHOLD);
    expect(fired.sample).toBeGreaterThanOrEqual(MIN_SAMPLE);
    expect(Date.parse(fired.window_start)).toBe(windowOf(Date.now(), 60).start);
    const id = `evt_alert_hooli_invalid_calls_${Date.parse(fired.window_start)}`;

    // The store's alarm sends it; running it here only hurries what the runtime runs anyway.
    await runDurableObjectAlarm(store());
    const [delivery] = await vi.waitFor(async () => {
      const received = await alertHooks(id);
      expect(received).toHaveLength(1);
      return received;
    }, landed);
    expect(delivery).toMatchObject({
      verified: true,
      body: {
        type: "alert.fired",
        tenant: "hooli",
        console_path: "/console/health",
        alert: { rate: "invalid_calls" },
      },
    });

    // The health page shows it while it fires.
    const operator = await signedInOperator("hooli");
    const page = await operator.get("/console/health");
    expect(page.html).toMatch(
      /<p class="alert-firing" data-rate="invalid_calls"><strong>Invalid calls<\/strong>/,
    );

    // Enough valid calls bring the rate to or under the threshold: the alert no longer shows.
    for (let call = 0; call <= MIN_SAMPLE; call++) expect((await valid(run)).body.outcome).toBe("success");
    await vi.waitFor(async () => expect(await firing()).toEqual([]), landed);
    expect((await operator.get("/console/health")).html).not.toContain("alert-firing");

    // A second crossing in the same window shows again, and sends nothing.
    for (let call = 0; call < 3; call++) await invalid(run);
    const again = await vi.waitFor(async () => {
      const alerts = await firing();
      expect(alerts.map((alert) => alert.rate)).toEqual(["invalid_calls"]);
      return alerts[0] as FiringAlert;
    }, landed);
    expect(again.window_start).toBe(fired.window_start);
    await runDurableObjectAlarm(store());
    const owed = await runInDurableObject(store(), (_instance, state) =>
      state.storage.sql
        .exec<{ webhook_id: string; attempts: number; next_at: number | null; outcome: string | null }>(
          "SELECT webhook_id, attempts, next_at, outcome FROM alert_deliveries",
        )
        .toArray(),
    );
    expect(owed).toEqual([{ webhook_id: id, attempts: 1, next_at: null, outcome: "acknowledged" }]);
    const { notifications, rejections } = await hooks();
    expect(notifications.filter((entry) => entry.webhook_id?.startsWith("evt_alert_hooli_"))).toHaveLength(1);
    expect(rejections.filter((entry) => entry.webhook_id === id)).toEqual([]);
  });

  it("retries a delivery its receiver fails to take, each attempt signed anew, with a growing delay, until it is acknowledged", async () => {
    const id = "evt_alert_hooli_task_success_0";
    // The receiver is down for the next two deliveries of this id: it answers them 503.
    await failWebhookDeliveries(id, 2);
    const alert: FiringAlert = {
      rate: "task_success",
      fires: "below",
      threshold: 0.9,
      window_minutes: 60,
      window_start: new Date(0).toISOString(),
      value: 0.5,
      sample: 20,
      since: new Date(0).toISOString(),
    };
    const row = () =>
      runInDurableObject(store(), (_instance, state) =>
        state.storage.sql
          .exec<{ attempts: number; next_at: number | null; outcome: string | null }>(
            "SELECT attempts, next_at, outcome FROM alert_deliveries WHERE webhook_id = ?",
            id,
          )
          .one(),
      );
    await runInDurableObject(store(), async (_instance, state) => {
      state.storage.sql.exec(
        `INSERT INTO alert_deliveries (webhook_id, tenant, rate, window_start, alert, created_at, next_at)
         VALUES (?, 'hooli', 'task_success', 0, ?, ?, ?)`,
        id,
        JSON.stringify(alert),
        Date.now(),
        Date.now(),
      );
      // Due now; scheduled later only so that this test runs it, not the runtime beside it.
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    await runDurableObjectAlarm(store());
    const failed = await row();
    expect(failed).toMatchObject({ attempts: 1, outcome: "failed" });
    expect((failed.next_at ?? 0) - Date.now()).toBeGreaterThan(25_000);
    expect((failed.next_at ?? 0) - Date.now()).toBeLessThanOrEqual(30_000);

    // The delay passes (its stored clock rewound), and the alarm tries again.
    await runInDurableObject(store(), (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE alert_deliveries SET next_at = ? WHERE webhook_id = ?",
        Date.now() - 1,
        id,
      );
    });
    await runDurableObjectAlarm(store());
    const again = await row();
    expect(again).toMatchObject({ attempts: 2, outcome: "failed" });
    expect((again.next_at ?? 0) - Date.now()).toBeGreaterThan(55_000);
    const refused = (await hooks()).rejections.filter((entry) => entry.webhook_id === id);
    expect(refused.map((entry) => entry.code)).toEqual(["receiver_unavailable", "receiver_unavailable"]);

    // The receiver is back: the third attempt is acknowledged, and nothing more is owed.
    await runInDurableObject(store(), (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE alert_deliveries SET next_at = ? WHERE webhook_id = ?",
        Date.now() - 1,
        id,
      );
    });
    await runDurableObjectAlarm(store());
    expect(await row()).toEqual({ attempts: 3, next_at: null, outcome: "acknowledged" });
    expect(await alertHooks(id)).toMatchObject([{ verified: true, body: { type: "alert.fired" } }]);
  });

  it("counts calls that reach the store after their window ended toward that window: it owes its webhook once, and the later window its own", async () => {
    // Two ended windows: the hour before the current one, and the hour before that.
    const boundary = windowOf(Date.now(), 60).start - HOUR_MS;
    const lastMinuteBefore = boundary / 60_000 - 1;
    const firstMinuteAfter = boundary / 60_000;
    const earlier = alertWebhookId("hooli", "invalid_calls", boundary - HOUR_MS);
    const later = alertWebhookId("hooli", "invalid_calls", boundary);
    // The store starts empty: no counts, no alert firing, no webhook owed.
    await runInDurableObject(store(), (_instance, state) => {
      state.storage.sql.exec("DELETE FROM minutes");
      state.storage.sql.exec("DELETE FROM alert_firing");
      state.storage.sql.exec("DELETE FROM alert_deliveries");
    });

    // One batch across the boundary: the earlier window crosses, the later holds too few calls.
    await store().record(
      [invalidCalls(lastMinuteBefore, MIN_SAMPLE), invalidCalls(firstMinuteAfter, MIN_SAMPLE - 5)],
      "hooli",
    );
    expect((await deliveries()).map((row) => row.webhook_id)).toEqual([earlier]);
    const [alert] = await store().firingAlerts("hooli");
    expect(alert).toMatchObject({
      rate: "invalid_calls",
      window_start: new Date(boundary - HOUR_MS).toISOString(),
    });

    // More late calls in both: the earlier window owes nothing more, the later one now crosses.
    await store().record([invalidCalls(lastMinuteBefore, 5), invalidCalls(firstMinuteAfter, 5)], "hooli");
    await store().record([invalidCalls(lastMinuteBefore, 1), invalidCalls(firstMinuteAfter, 1)], "hooli");
    expect((await deliveries()).map((row) => row.webhook_id)).toEqual([earlier, later]);
    const [moved] = await store().firingAlerts("hooli");
    expect(moved).toMatchObject({
      window_start: new Date(boundary).toISOString(),
      sample: MIN_SAMPLE + 1,
      since: alert?.since,
    });

    // The alarm sends each once, and the receiver acknowledges both.
    await runDurableObjectAlarm(store());
    expect(await deliveries()).toEqual([
      { webhook_id: earlier, attempts: 1, outcome: "acknowledged" },
      { webhook_id: later, attempts: 1, outcome: "acknowledged" },
    ]);
    for (const id of [earlier, later]) expect(await alertHooks(id)).toHaveLength(1);
  });
});
