import { ALERT_RATES, type Alert, type AlertRate } from "../config/alerts";
import type { Counter, Counts } from "./events";

// Every rate of the table names real counters: a misspelt one is a type error here.
ALERT_RATES satisfies Record<AlertRate, { part: Counter; whole: Counter; except?: Counter }>;

const MINUTE_MS = 60_000;

/** The window an instant falls in: whole minutes aligned to the epoch, `start` inclusive, `end` exclusive. */
export function windowOf(at: number, windowMinutes: number): { start: number; end: number } {
  const width = windowMinutes * MINUTE_MS;
  const start = Math.floor(at / width) * width;
  return { start, end: start + width };
}

/** A rate measured over one window: the share and how many it is a share of. */
export interface Measured {
  value: number | null;
  sample: number;
}

export function measure(rate: AlertRate, counts: Counts): Measured {
  const row: { part: Counter; whole: Counter; except?: Counter } = ALERT_RATES[rate];
  const sample = Math.max(0, counts[row.whole] - (row.except ? counts[row.except] : 0));
  const { part } = row;
  return { value: sample > 0 ? counts[part] / sample : null, sample };
}

/**
 * What one window says of an alert: `crossed` (on the bad side of the threshold, strictly),
 * `within` (back on the good side or on it), or `too_few` (fewer than `min_sample`: it says nothing,
 * so an alert already firing stays firing).
 */
export type Verdict = "crossed" | "within" | "too_few";

export function judge(rate: AlertRate, alert: Alert, measured: Measured): Verdict {
  if (measured.value === null || measured.sample < alert.min_sample) return "too_few";
  const crossed =
    ALERT_RATES[rate].fires === "above" ? measured.value > alert.threshold : measured.value < alert.threshold;
  return crossed ? "crossed" : "within";
}

/**
 * What a verdict does to an alert: it shows while firing, from the first crossing until a window
 * says `within`; a webhook goes out on a crossing only if none went out for that window yet.
 */
export function step(
  firing: boolean,
  sentThisWindow: boolean,
  verdict: Verdict,
): { firing: boolean; send: boolean } {
  switch (verdict) {
    case "crossed":
      return { firing: true, send: !sentThisWindow };
    case "within":
      return { firing: false, send: false };
    case "too_few":
      return { firing, send: false };
  }
}

/** The `webhook-id` of an alert's window: the same for every attempt, so a receiver keeps one. */
export function alertWebhookId(tenant: string, rate: AlertRate, windowStart: number): string {
  return `evt_alert_${tenant}_${rate}_${windowStart}`;
}

/** Attempts after a failed delivery wait 30 s, doubled each time, at most an hour. */
export function retryDelayMs(failedAttempts: number): number {
  return Math.min(60 * MINUTE_MS, 30_000 * 2 ** Math.max(0, failedAttempts - 1));
}

/** A delivery is given up after this many attempts (about a day with the delays above), and logged. */
export const MAX_DELIVERY_ATTEMPTS = 30;
