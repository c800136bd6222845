import { DurableObject } from "cloudflare:workers";
import { postSignedEvent } from "../approvals/signed-webhook";
import { ALERT_RATES, type Alert, type AlertRate } from "../config/alerts";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import {
  alertWebhookId,
  judge,
  MAX_DELIVERY_ATTEMPTS,
  measure,
  retryDelayMs,
  step,
  windowOf,
} from "../metrics/alerts";
import { COUNTERS, type Counts } from "../metrics/events";
import type { MetricRow } from "../metrics/series";
import type { FiringAlert } from "../wire/metrics";

/** How long the local store keeps a minute: the widest range the metrics route reads, and a day. */
export const RETENTION_MS = 8 * 24 * 60 * 60 * 1000;
const MINUTE_MS = 60_000;
/** Old minutes are deleted on a write at most this often: the delete is cheap, not free. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** Counts of one minute, namespace and tool, added to what the store holds. */
export interface MinuteDelta {
  /** Epoch minutes. */
  minute: number;
  namespace: string;
  tool: string;
  counts: Counts;
}

export interface StoreQuery {
  /** Epoch milliseconds, inclusive; the start of a bucket. */
  since: number;
  /** Epoch milliseconds, exclusive. */
  until: number;
  bucketMs: number;
  namespace: string | null;
}

// The column names come from the fixed COUNTERS list, never from input.
const COLUMNS = COUNTERS.map((counter) => `${counter} INTEGER NOT NULL DEFAULT 0`).join(",\n  ");
const SCHEMA = `
CREATE TABLE IF NOT EXISTS minutes (
  minute INTEGER NOT NULL,
  namespace TEXT NOT NULL,
  tool TEXT NOT NULL,
  ${COLUMNS},
  PRIMARY KEY (minute, namespace, tool)
) WITHOUT ROWID;
`;
const UPSERT = `INSERT INTO minutes (minute, namespace, tool, ${COUNTERS.join(", ")})
  VALUES (?, ?, ?, ${COUNTERS.map(() => "?").join(", ")})
  ON CONFLICT (minute, namespace, tool) DO UPDATE SET
  ${COUNTERS.map((counter) => `${counter} = ${counter} + excluded.${counter}`).join(", ")}`;
const SUMS = COUNTERS.map((counter) => `SUM(${counter}) AS ${counter}`).join(", ");

/**
 * Alerts: `alert_firing` holds each alert firing now (one row per rate, gone when it recovers);
 * `alert_deliveries` one row per alert and window that crossed, the webhook it owes until
 * acknowledged. Its primary key is the webhook id, so a window's webhook is owed once.
 */
const ALERT_SCHEMA = `
CREATE TABLE IF NOT EXISTS alert_firing (
  rate TEXT PRIMARY KEY,
  since INTEGER NOT NULL,
  window_start INTEGER NOT NULL,
  value REAL,
  sample INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS alert_deliveries (
  webhook_id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  rate TEXT NOT NULL,
  window_start INTEGER NOT NULL,
  alert TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER,
  outcome TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS alert_deliveries_due ON alert_deliveries (next_at) WHERE next_at IS NOT NULL;
`;

/** What an alert's webhook posts, signed byte for byte; `alert.fired` once per alert and window. */
export interface AlertEvent {
  type: "alert.fired";
  /** When this attempt was sent (ISO 8601); the signed `webhook-timestamp` says the same in seconds. */
  timestamp: string;
  tenant: string;
  alert: FiringAlert;
  console_path: string;
}

interface FiringRow extends Record<string, SqlStorageValue> {
  rate: string;
  since: number;
  window_start: number;
  value: number | null;
  sample: number;
}

interface DeliveryRow extends Record<string, SqlStorageValue> {
  webhook_id: string;
  tenant: string;
  alert: string;
  attempts: number;
}

/**
 * One per tenant, where no Analytics Engine is bound (`npm start`, the tests, a deployed sandbox),
 * and beside it for the tenants that set alerts: exact counts in minute buckets per namespace and
 * tool, kept for eight days. Writes arrive in batches from each isolate (store-sink.ts), never on an
 * agent's answer path. As the tenant's one writer it also judges the tenant's alerts and owes their
 * webhooks (config/alerts.ts, metrics/alerts.ts).
 */
export class MetricsStore extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  #prunedAt = 0;
  #delivering: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    void ctx.blockConcurrencyWhile(async () => {
      this.#sql.exec(SCHEMA);
      // A counter added since the table was created gets its column, zero for the minutes before.
      const present = new Set(
        this.#sql
          .exec<{ name: string }>("PRAGMA table_info(minutes)")
          .toArray()
          .map((row) => row.name),
      );
      for (const counter of COUNTERS) {
        if (!present.has(counter))
          this.#sql.exec(`ALTER TABLE minutes ADD COLUMN ${counter} INTEGER NOT NULL DEFAULT 0`);
      }
      this.#sql.exec(ALERT_SCHEMA);
    });
  }

  /** Adds a batch of the tenant's counts, then judges the tenant's alerts on what the store now holds. */
  async record(deltas: MinuteDelta[], tenant?: string): Promise<void> {
    for (const delta of deltas) {
      this.#sql.exec(
        UPSERT,
        delta.minute,
        delta.namespace,
        delta.tool,
        ...COUNTERS.map((counter) => delta.counts[counter]),
      );
    }
    const now = Date.now();
    if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = now;
      this.#sql.exec("DELETE FROM minutes WHERE minute < ?", Math.floor((now - RETENTION_MS) / MINUTE_MS));
      this.#sql.exec(
        "DELETE FROM alert_deliveries WHERE next_at IS NULL AND created_at < ?",
        now - RETENTION_MS,
      );
    }
    if (tenant !== undefined)
      await this.#judgeAlerts(
        tenant,
        now,
        deltas.map((delta) => delta.minute),
      );
  }

  /** The tenant's alerts firing now, as the health page and `GET /v1/metrics` show them. */
  firingAlerts(tenant: string): FiringAlert[] {
    const alerts = loadConfig(this.env).tenants[tenant]?.alerts ?? {};
    return this.#sql
      .exec<FiringRow>(
        "SELECT rate, since, window_start, value, sample FROM alert_firing ORDER BY since, rate",
      )
      .toArray()
      .flatMap((row) => {
        const alert = alerts[row.rate as AlertRate];
        return alert ? [firingAlert(row.rate as AlertRate, alert, row)] : [];
      });
  }

  /**
   * Judges each alert over its current window and over every window the batch's minutes fall in,
   * oldest first: a batch reaches the store up to a few seconds after its calls, so the last calls of
   * a window often land after it ended, and still count toward it. Synchronous up to the alarm: two
   * batches can never both see a window unsent, so a window owes at most one webhook per alert.
   */
  async #judgeAlerts(tenant: string, now: number, minutes: readonly number[]): Promise<void> {
    const alerts = loadConfig(this.env).tenants[tenant]?.alerts ?? {};
    let owed = false;
    for (const [rate, alert] of Object.entries(alerts) as [AlertRate, Alert][]) {
      const starts = new Set([
        windowOf(now, alert.window_minutes).start,
        ...minutes.map((minute) => windowOf(minute * MINUTE_MS, alert.window_minutes).start),
      ]);
      for (const start of [...starts].sort((a, b) => a - b)) {
        if (this.#judgeWindow(tenant, rate, alert, windowOf(start, alert.window_minutes), now)) owed = true;
      }
    }
    if (owed) await this.ctx.storage.setAlarm(now);
  }

  /**
   * Judges one alert over one window; true when the window's webhook is now owed. A window older
   * than the one the firing alert was last measured in changes neither whether it fires nor its
   * figures (the newer window's stand); if it crossed, its own webhook is still owed, once.
   */
  #judgeWindow(
    tenant: string,
    rate: AlertRate,
    alert: Alert,
    window: { start: number; end: number },
    now: number,
  ): boolean {
    const measured = measure(rate, this.#sum(window.start, window.end));
    const firing = this.#sql
      .exec<FiringRow>(
        "SELECT rate, since, window_start, value, sample FROM alert_firing WHERE rate = ?",
        rate,
      )
      .toArray()[0];
    const id = alertWebhookId(tenant, rate, window.start);
    const sent =
      this.#sql.exec("SELECT 1 FROM alert_deliveries WHERE webhook_id = ?", id).toArray().length > 0;
    const next = step(firing !== undefined, sent, judge(rate, alert, measured));
    const superseded = firing !== undefined && window.start < firing.window_start;
    if (!next.firing) {
      if (firing && !superseded) this.#sql.exec("DELETE FROM alert_firing WHERE rate = ?", rate);
      return false;
    }
    const row: FiringRow = {
      rate,
      since: firing?.since ?? now,
      window_start: window.start,
      value: measured.value,
      sample: measured.sample,
    };
    // A window too thin to judge leaves the firing alert as it was last measured.
    if (!superseded && (!firing || measured.sample >= alert.min_sample))
      this.#sql.exec(
        `INSERT INTO alert_firing (rate, since, window_start, value, sample) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (rate) DO UPDATE SET window_start = excluded.window_start, value = excluded.value, sample = excluded.sample`,
        row.rate,
        row.since,
        row.window_start,
        row.value,
        row.sample,
      );
    if (!next.send) return false;
    this.#sql.exec(
      `INSERT INTO alert_deliveries (webhook_id, tenant, rate, window_start, alert, created_at, next_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      id,
      tenant,
      rate,
      window.start,
      JSON.stringify(firingAlert(rate, alert, row)),
      now,
      now,
    );
    return true;
  }

  /** The tenant's counts, every namespace and tool, over [since, until) in epoch milliseconds. */
  #sum(since: number, until: number): Counts {
    const row = this.#sql
      .exec<Record<string, number | null>>(
        `SELECT ${SUMS} FROM minutes WHERE minute >= ? AND minute < ?`,
        Math.floor(since / MINUTE_MS),
        Math.ceil(until / MINUTE_MS),
      )
      .one();
    return Object.fromEntries(COUNTERS.map((counter) => [counter, Number(row[counter] ?? 0)])) as Counts;
  }

  /**
   * Sends the webhooks owed: each until its receiver acknowledges it (2xx), retried with growing
   * delays, each attempt signed anew (the same `webhook-id`, so a receiver keeps one). Without a
   * configured webhook nothing is sent and nothing is retried: the alert still shows on the page.
   */
  override alarm(): Promise<void> {
    // One round at a time: a second alarm while one sends waits for it instead of sending twice.
    this.#delivering ??= this.#deliverOwed().finally(() => {
      this.#delivering = null;
    });
    return this.#delivering;
  }

  async #deliverOwed(): Promise<void> {
    const now = Date.now();
    const due = this.#sql
      .exec<DeliveryRow>(
        "SELECT webhook_id, tenant, alert, attempts FROM alert_deliveries WHERE next_at IS NOT NULL AND next_at <= ?",
        now,
      )
      .toArray();
    for (const delivery of due) {
      const at = new Date();
      const event: AlertEvent = {
        type: "alert.fired",
        timestamp: at.toISOString(),
        tenant: delivery.tenant,
        alert: JSON.parse(delivery.alert) as FiringAlert,
        console_path: "/console/health",
      };
      const outcome = await postSignedEvent(this.env, {
        id: delivery.webhook_id,
        at,
        body: JSON.stringify(event),
      });
      const attempts = delivery.attempts + 1;
      const retry = outcome === "failed" && attempts < MAX_DELIVERY_ATTEMPTS;
      if (outcome === "failed" && !retry)
        console.error(`alert webhook ${delivery.webhook_id} given up after ${attempts} attempts`);
      this.#sql.exec(
        "UPDATE alert_deliveries SET attempts = ?, next_at = ?, outcome = ? WHERE webhook_id = ?",
        attempts,
        retry ? Date.now() + retryDelayMs(attempts) : null,
        outcome,
        delivery.webhook_id,
      );
    }
    const next = this.#sql
      .exec<{ next: number | null }>("SELECT MIN(next_at) AS next FROM alert_deliveries")
      .one().next;
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }

  /** Sums per bucket and namespace, oldest first; buckets without events are absent. */
  read(query: StoreQuery): MetricRow[] {
    const step = Math.max(1, Math.round(query.bucketMs / MINUTE_MS));
    const from = Math.floor(query.since / MINUTE_MS);
    const to = Math.ceil(query.until / MINUTE_MS);
    const filter = query.namespace === null ? "" : "AND namespace = ?";
    const bindings = query.namespace === null ? [] : [query.namespace];
    const rows = this.#sql.exec<Record<string, number | string>>(
      // `%` works on integers whatever type the binding arrives as; `/` would not floor a REAL.
      `SELECT minute - minute % ? AS bucket, namespace, ${SUMS}
       FROM minutes WHERE minute >= ? AND minute < ? ${filter}
       GROUP BY bucket, namespace ORDER BY bucket, namespace`,
      step,
      from,
      to,
      ...bindings,
    );
    return rows.toArray().map((row) => ({
      t: Number(row.bucket) * MINUTE_MS,
      namespace: String(row.namespace),
      counts: Object.fromEntries(COUNTERS.map((counter) => [counter, Number(row[counter] ?? 0)])) as Counts,
    }));
  }
}

function firingAlert(rate: AlertRate, alert: Alert, row: FiringRow): FiringAlert {
  return {
    rate,
    fires: ALERT_RATES[rate].fires,
    threshold: alert.threshold,
    window_minutes: alert.window_minutes,
    window_start: new Date(row.window_start).toISOString(),
    value: row.value,
    sample: row.sample,
    since: new Date(row.since).toISOString(),
  };
}
