import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { toDataPoint } from "../../src/metrics/analytics-engine-sink";
import {
  buildMetricsSql,
  METRICS_DATASET,
  parseMetricsResponse,
  sqlString,
} from "../../src/metrics/analytics-engine-sql";
import { COUNTERS, zeroCounts } from "../../src/metrics/events";
import { readMetrics } from "../../src/metrics/read";
import { alignRange } from "../../src/metrics/series";
import { envelopeSchema } from "../../src/wire/envelope";
import { KEYS } from "./helpers";

const HOUR = 3_600_000;
const SINCE = Date.parse("2026-05-01T10:20:00Z");
const UNTIL = Date.parse("2026-05-01T13:00:00Z");

/** acme's hourly metrics read as production reads them: Analytics Engine bound, the SQL API configured. */
function readFromAnalyticsEngine(fetcher: typeof fetch) {
  const production = {
    ...env,
    METRICS: { writeDataPoint: () => {} },
    METRICS_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
    METRICS_API_TOKEN: "metrics-read-token",
  };
  return readMetrics(production, "acme", { since: SINCE, until: UNTIL, bucket: "hour" }, fetcher);
}

/** An answer of the SQL API in its documented `FORMAT JSON` shape; 64-bit sums arrive as strings. */
function sqlAnswer(rows: Array<Record<string, number | string>>) {
  const full = rows.map((row) => ({
    ...Object.fromEntries(COUNTERS.map((counter) => [counter, 0])),
    ...row,
  }));
  return {
    meta: [
      { name: "t", type: "UInt32" },
      { name: "namespace", type: "String" },
      ...COUNTERS.map((name) => ({ name, type: "Float64" })),
    ],
    data: full,
    rows: full.length,
    rows_before_limit_at_least: full.length,
  };
}

describe("the Analytics Engine sink", () => {
  it("writes the tenant as the index, the labels as blobs and every counter as a double, in order", () => {
    const counts = { ...zeroCounts(), calls: 1, invalid: 1, terminal: 1 };
    const point = toDataPoint({
      tenant: "acme",
      namespace: "support",
      tool: "lookup_order",
      kind: "call",
      label: "validation_error",
      at: SINCE,
      counts,
    });
    expect(point).toEqual({
      indexes: ["acme"],
      blobs: ["support", "lookup_order", "call", "validation_error"],
      doubles: COUNTERS.map((counter) => counts[counter]),
    });
    // Analytics Engine takes at most 20 doubles a data point.
    expect(point.doubles).toHaveLength(20);
  });

  it("gets one data point per call from the pipeline, and the store gets nothing", async () => {
    const written: AnalyticsEngineDataPoint[] = [];
    const production = {
      ...env,
      METRICS: { writeDataPoint: (point?: AnalyticsEngineDataPoint) => void (point && written.push(point)) },
    };
    const opened = await app.request(
      "https://proxy.test/v1/runs",
      {
        method: "POST",
        headers: { authorization: `Bearer ${KEYS.globex}`, "content-type": "application/json" },
        body: JSON.stringify({ namespace: "support" }),
      },
      production,
    );
    const run = envelopeSchema().parse(await opened.json()).data as { run_id: string; run_token: string };
    const call = (args: unknown) =>
      app.request(
        `https://proxy.test/v1/runs/${run.run_id}/calls`,
        {
          method: "POST",
          headers: { authorization: `Bearer ${run.run_token}`, "content-type": "application/json" },
          body: JSON.stringify({ tool: "lookup_order", args }),
        },
        production,
      );
    await call({ order_id: "B2001" });
    await call({ order: "B2001" });
    expect(written.map((point) => [point.indexes, point.blobs])).toEqual([
      [["globex"], ["support", "lookup_order", "call", "success"]],
      [["globex"], ["support", "lookup_order", "call", "validation_error"]],
    ]);
    const invalid = written[1]?.doubles ?? [];
    expect(invalid[COUNTERS.indexOf("calls")]).toBe(1);
    expect(invalid[COUNTERS.indexOf("invalid")]).toBe(1);
  });
});

describe("reading Analytics Engine back with the SQL API", () => {
  it("sums every counter weighted by its sample interval, for one tenant, range and bucket", () => {
    const sql = buildMetricsSql("acme", alignRange(SINCE, UNTIL, "hour"), "support");
    expect(sql).toContain(`FROM ${METRICS_DATASET}`);
    expect(sql).toContain("toUnixTimestamp(toStartOfInterval(timestamp, INTERVAL '1' HOUR)) AS t");
    COUNTERS.forEach((counter, index) => {
      expect(sql).toContain(`SUM(_sample_interval * double${index + 1}) AS ${counter}`);
    });
    expect(sql).toContain("index1 = 'acme'");
    expect(sql).toContain("blob1 = 'support'");
    // The range starts at its first whole bucket.
    expect(sql).toContain("timestamp >= toDateTime('2026-05-01 10:00:00')");
    expect(sql).toContain("timestamp < toDateTime('2026-05-01 13:00:00')");
    expect(sql).toMatch(/GROUP BY t, namespace\nORDER BY t, namespace\nFORMAT JSON$/);
    expect(buildMetricsSql("acme", alignRange(SINCE, UNTIL, "minute"), null)).not.toContain("blob1 =");
    expect(buildMetricsSql("acme", alignRange(SINCE, UNTIL, "day"), null)).toContain("INTERVAL '1' DAY");
  });

  it("quotes every string it puts in the SQL", () => {
    expect(sqlString("o'brien\\")).toBe("'o\\'brien\\\\'");
    const sql = buildMetricsSql("x' OR '1'='1", alignRange(SINCE, UNTIL, "hour"), null);
    expect(sql).toContain("index1 = 'x\\' OR \\'1\\'=\\'1'");
  });

  it("parses the documented JSON answer, numbers sent as strings included", () => {
    const parsed = parseMetricsResponse(
      sqlAnswer([
        { t: SINCE / 1000, namespace: "support", calls: "12", succeeded: 9, invalid: "2", loops: "1" },
        { t: String((SINCE + HOUR) / 1000), namespace: "support", calls: 4, replays: 2 },
      ]),
    );
    expect(parsed).toEqual({
      ok: true,
      rows: [
        {
          t: SINCE,
          namespace: "support",
          counts: { ...zeroCounts(), calls: 12, succeeded: 9, invalid: 2, loops: 1 },
        },
        { t: SINCE + HOUR, namespace: "support", counts: { ...zeroCounts(), calls: 4, replays: 2 } },
      ],
    });
    expect(parseMetricsResponse({ errors: [{ message: "bad" }] })).toEqual({
      ok: false,
      reason: "the SQL API answered an unexpected shape",
    });
    expect(parseMetricsResponse(sqlAnswer([{ t: "soon", namespace: "support" }])).ok).toBe(false);
  });

  it("reads a report through the SQL API with the account, the token and the SQL, and never reaches the network", async () => {
    const seen: Array<{ url: string; authorization: string | null; body: string }> = [];
    const fetcher = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      seen.push({
        url: request.url,
        authorization: request.headers.get("authorization"),
        body: await request.text(),
      });
      return Response.json(
        sqlAnswer([
          { t: Date.parse("2026-05-01T11:00:00Z") / 1000, namespace: "support", calls: 10, succeeded: 8 },
        ]),
      );
    }) as typeof fetch;
    const reading = await readFromAnalyticsEngine(fetcher);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url).toBe(
      "https://api.cloudflare.com/client/v4/accounts/0123456789abcdef0123456789abcdef/analytics_engine/sql",
    );
    expect(seen[0]?.authorization).toBe("Bearer metrics-read-token");
    expect(seen[0]?.body).toBe(buildMetricsSql("acme", alignRange(SINCE, UNTIL, "hour"), null));
    if (!reading.ok) throw new Error(reading.message);
    expect(reading.report).toMatchObject({ source: "analytics_engine", since: "2026-05-01T10:00:00.000Z" });
    const points = reading.report.series[0]?.points ?? [];
    expect(points.map((point) => [point.t, point.calls, point.success_rate])).toEqual([
      ["2026-05-01T10:00:00.000Z", 0, null],
      ["2026-05-01T11:00:00.000Z", 10, 0.8],
      ["2026-05-01T12:00:00.000Z", 0, null],
    ]);
  });

  it("says the source failed, without its text, when the SQL API refuses", async () => {
    const fetcher = (async () => new Response("error near 'SELECT ...'", { status: 422 })) as typeof fetch;
    const reading = await readFromAnalyticsEngine(fetcher);
    expect(reading).toMatchObject({ ok: false, reason: "unavailable" });
    expect(JSON.stringify(reading)).not.toContain("SELECT");
  });
});
