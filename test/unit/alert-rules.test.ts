import { describe, expect, it } from "vitest";
import { ALERT_RATES, type Alert, alertSchema } from "../../src/config/alerts";
import {
  alertWebhookId,
  judge,
  MAX_DELIVERY_ATTEMPTS,
  measure,
  retryDelayMs,
  step,
  windowOf,
} from "../../src/metrics/alerts";
import { zeroCounts } from "../../src/metrics/events";

const alert = (threshold: number, min_sample = 4): Alert =>
  alertSchema().parse({ threshold, window_minutes: 60, min_sample });
const counts = (extra: Partial<ReturnType<typeof zeroCounts>>) => ({ ...zeroCounts(), ...extra });

describe("an alert's window", () => {
  it("is whole minutes aligned to the epoch, the start inclusive and the end exclusive", () => {
    const hour = 3_600_000;
    const at = Date.parse("2026-05-01T12:34:56Z");
    expect(windowOf(at, 60)).toEqual({
      start: Date.parse("2026-05-01T12:00:00Z"),
      end: Date.parse("2026-05-01T13:00:00Z"),
    });
    expect(windowOf(Date.parse("2026-05-01T13:00:00Z"), 60).start).toBe(Date.parse("2026-05-01T13:00:00Z"));
    expect(windowOf(at, 5)).toEqual({
      start: Date.parse("2026-05-01T12:30:00Z"),
      end: Date.parse("2026-05-01T12:35:00Z"),
    });
    expect(windowOf(at, 1440).end - windowOf(at, 1440).start).toBe(24 * hour);
  });
});

describe("measuring and judging a rate", () => {
  it("measures each rate as its counter over calls, and nothing without calls", () => {
    expect(measure("invalid_calls", counts({ calls: 8, invalid: 2 }))).toEqual({ value: 0.25, sample: 8 });
    expect(measure("task_success", counts({ calls: 4, succeeded: 3 }))).toEqual({ value: 0.75, sample: 4 });
    // A call waiting for a human is neither success nor failure: it is not in the sample.
    expect(measure("task_success", counts({ calls: 6, succeeded: 3, escalations: 2 }))).toEqual({
      value: 0.75,
      sample: 4,
    });
    expect(measure("human_takeover", counts({ calls: 5, escalations: 1 }))).toEqual({
      value: 0.2,
      sample: 5,
    });
    expect(measure("duplicates_prevented", counts({ calls: 10, duplicates_prevented: 1 }))).toEqual({
      value: 0.1,
      sample: 10,
    });
    expect(measure("invalid_calls", zeroCounts())).toEqual({ value: null, sample: 0 });
  });

  it("crosses strictly above the threshold for a bad rate, strictly below it for task success", () => {
    expect(ALERT_RATES.task_success.fires).toBe("below");
    expect(judge("invalid_calls", alert(0.5), { value: 0.51, sample: 10 })).toBe("crossed");
    expect(judge("invalid_calls", alert(0.5), { value: 0.5, sample: 10 })).toBe("within");
    expect(judge("task_success", alert(0.9), { value: 0.89, sample: 10 })).toBe("crossed");
    expect(judge("task_success", alert(0.9), { value: 0.9, sample: 10 })).toBe("within");
    expect(judge("human_takeover", alert(0), { value: 0.01, sample: 100 })).toBe("crossed");
  });

  it("says nothing of a window holding fewer calls than min_sample", () => {
    expect(judge("invalid_calls", alert(0.1, 20), { value: 1, sample: 19 })).toBe("too_few");
    expect(judge("invalid_calls", alert(0.1, 20), { value: 1, sample: 20 })).toBe("crossed");
    expect(judge("invalid_calls", alert(0.1), { value: null, sample: 0 })).toBe("too_few");
  });
});

describe("what a verdict does", () => {
  it("fires and sends on the first crossing of a window", () => {
    expect(step(false, false, "crossed")).toEqual({ firing: true, send: true });
  });

  it("sends nothing for a window that already sent, whether it kept firing or crossed again", () => {
    expect(step(true, true, "crossed")).toEqual({ firing: true, send: false });
    expect(step(false, true, "crossed")).toEqual({ firing: true, send: false });
  });

  it("stops showing when a window says the rate recovered, and keeps showing on a window too thin to judge", () => {
    expect(step(true, true, "within")).toEqual({ firing: false, send: false });
    expect(step(true, true, "too_few")).toEqual({ firing: true, send: false });
    expect(step(false, false, "too_few")).toEqual({ firing: false, send: false });
  });

  it("sends again in a new window that crosses while still firing", () => {
    expect(step(true, false, "crossed")).toEqual({ firing: true, send: true });
  });
});

describe("delivery", () => {
  it("names one webhook id per tenant, rate and window, the same for every attempt", () => {
    expect(alertWebhookId("acme", "invalid_calls", 1_000)).toBe("evt_alert_acme_invalid_calls_1000");
    expect(alertWebhookId("acme", "invalid_calls", 2_000)).not.toBe(
      alertWebhookId("acme", "invalid_calls", 1_000),
    );
  });

  it("waits 30 s after a first failure, doubling to at most an hour, and gives up after about a day", () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(retryDelayMs(20)).toBe(3_600_000);
    let total = 0;
    for (let attempt = 1; attempt < MAX_DELIVERY_ATTEMPTS; attempt++) total += retryDelayMs(attempt);
    expect(total).toBeGreaterThan(12 * 3_600_000);
    expect(total).toBeLessThan(36 * 3_600_000);
  });
});
