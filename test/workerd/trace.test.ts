import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EXPORT_PAGE } from "../../src/routes/trace-export";
import { armFault, callTool, openRun, traceOf } from "./helpers";

describe("the run's trace", () => {
  it("has one complete entry per dispatch, in order", async () => {
    const run = await openRun("acme");
    await callTool(run, "lookup_order", { order_id: "A1001" });
    await callTool(run, "lookup_order", { orderId: "A1001" });
    await callTool(run, "create_internal_ticket", {
      customer_id: "C100",
      priority: "low",
      summary: "Customer asked for a call back.",
    });
    const entries = await traceOf(run);
    expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect(entries[0]).toMatchObject({
      tool: "lookup_order",
      side_effect: "read",
      args: { order_id: "A1001" },
      outcome: "success",
      error_code: null,
      upstream_status: 200,
      replayed: false,
      idempotency_key: null,
      catalog_version: expect.stringMatching(/^cat_/),
    });
    expect(entries[0]?.call_id).toMatch(/^call_/);
    expect(entries[0]?.latency_ms).toBeGreaterThanOrEqual(0);
    expect(entries[1]).toMatchObject({
      outcome: "terminal_failure",
      error_code: "validation_error",
      upstream_attempts: [],
    });
    expect(entries[2]).toMatchObject({
      side_effect: "write",
      idempotency_key: expect.stringMatching(/^idk_/),
      upstream_status: 201,
    });
  });

  it("lists every upstream attempt of a call", async () => {
    const run = await openRun("acme");
    await armFault(run.id, { mode: "bad_gateway", times: 2 });
    await callTool(run, "search_refund_policy", { query: "damaged item" });
    const [entry] = await traceOf(run);
    const attempts = entry?.upstream_attempts as Array<{
      attempt: number;
      upstream_status: number;
      result: string;
    }>;
    expect(
      attempts.map(({ attempt, upstream_status, result }) => [attempt, upstream_status, result]),
    ).toEqual([
      [1, 502, "http_error"],
      [2, 502, "http_error"],
      [3, 200, "success"],
    ]);
  });

  it("streams NDJSON when asked", async () => {
    const run = await openRun("acme");
    await callTool(run, "lookup_order", { order_id: "A1002" });
    await callTool(run, "lookup_order", { order_id: "A1003" });
    const response = await exports.default.fetch(`https://proxy.test/v1/runs/${run.id}/trace`, {
      headers: { authorization: `Bearer ${run.token}`, accept: "application/x-ndjson" },
    });
    expect(response.headers.get("content-type")).toContain("application/x-ndjson");
    const lines = (await response.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.args.order_id)).toEqual(["A1002", "A1003"]);
  });

  it("exports OpenTelemetry GenAI execute_tool spans as OTLP JSON", async () => {
    const run = await openRun("acme");
    await callTool(run, "lookup_order", { order_id: "A1001" });
    await callTool(run, "lookup_order", { order_id: "A9999" });
    const response = await exports.default.fetch(`https://proxy.test/v1/runs/${run.id}/trace?format=otlp`, {
      headers: { authorization: `Bearer ${run.token}` },
    });
    const otlp = (await response.json()) as {
      resourceSpans: Array<{
        scopeSpans: Array<{
          spans: Array<{
            name: string;
            traceId: string;
            spanId: string;
            attributes: Array<{ key: string; value: Record<string, unknown> }>;
          }>;
        }>;
      }>;
    };
    const spans = otlp.resourceSpans[0]?.scopeSpans[0]?.spans ?? [];
    expect(spans).toHaveLength(2);
    const attributes = (index: number) =>
      Object.fromEntries(
        (spans[index]?.attributes ?? []).map(({ key, value }) => [key, Object.values(value)[0]]),
      );
    expect(spans[0]?.name).toBe("execute_tool lookup_order");
    expect(spans[0]?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(spans[0]?.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(spans[0]?.traceId).toBe(spans[1]?.traceId);
    expect(attributes(0)).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "lookup_order",
    });
    expect(attributes(0)["gen_ai.tool.call.id"]).toMatch(/^call_/);
    expect(attributes(0)).not.toHaveProperty("error.type");
    expect(attributes(1)["error.type"]).toBe("not_found");
  });

  it("pages the trace with a cursor and a limit, and streams every entry of a long run in both exports", async () => {
    const run = await openRun("initech", { namespace: "support", limits: { max_calls: 2_000 } });
    const calls = EXPORT_PAGE + 10;
    const outcomes: string[] = [];
    for (let batch = 0; batch < calls; batch += 25) {
      const answers = await Promise.all(
        Array.from({ length: Math.min(25, calls - batch) }, (_, index) =>
          callTool(run, "lookup_order", {
            order_id: `I30${String(((batch + index) % 20) + 1).padStart(2, "0")}`,
          }),
        ),
      );
      outcomes.push(...answers.map((answer) => answer.body.error?.code ?? answer.body.outcome));
    }
    const get = (query: string, headers: Record<string, string> = {}) =>
      exports.default.fetch(`https://proxy.test/v1/runs/${run.id}/trace${query}`, {
        headers: { authorization: `Bearer ${run.token}`, ...headers },
      });

    // Pages: the first, then each next_cursor, until null; together they are the trace, in order.
    const seen: number[] = [];
    let cursor: string | null = "";
    let pages = 0;
    while (cursor !== null) {
      const response = await get(`?limit=120${cursor ? `&cursor=${cursor}` : ""}`);
      const body = (await response.json()) as {
        data: { entries: Array<{ seq: number }>; next_cursor: string | null };
      };
      expect(body.data.entries.length).toBeLessThanOrEqual(120);
      seen.push(...body.data.entries.map((entry) => entry.seq));
      cursor = body.data.next_cursor;
      pages++;
    }
    expect(pages).toBe(Math.ceil(calls / 120));
    // Should an entry go missing, the calls' answers other than success say which were refused, and how.
    expect(seen, JSON.stringify(outcomes.filter((outcome) => outcome !== "success"))).toHaveLength(calls);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    const first = (await (await get("")).json()) as { data: { entries: unknown[]; next_cursor: string } };
    expect(first.data.entries).toHaveLength(100);
    expect(first.data.next_cursor).toMatch(/^\d+$/);

    const ndjson = (await (await get("", { accept: "application/x-ndjson" })).text()).trim().split("\n");
    expect(ndjson.map((line) => (JSON.parse(line) as { seq: number }).seq)).toEqual(seen);
    const otlp = (await (await get("?format=otlp")).json()) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: unknown[] }> }>;
    };
    expect(otlp.resourceSpans[0]?.scopeSpans[0]?.spans).toHaveLength(calls);
  }, 120_000); // a long run written and streamed twice: slow when the machine is busy, never a wait.

  it.each([
    ["a cursor that is not one", "?cursor=abc", "query.cursor"],
    ["a limit of 0", "?limit=0", "query.limit"],
    ["a limit over 1000", "?limit=1001", "query.limit"],
    ["an unknown format", "?format=csv", "query.format"],
    ["an unknown parameter", "?page=2", "query.page"],
  ])("refuses %s with a field problem", async (_label, query, field) => {
    const run = await openRun("acme");
    const response = await exports.default.fetch(`https://proxy.test/v1/runs/${run.id}/trace${query}`, {
      headers: { authorization: `Bearer ${run.token}` },
    });
    expect(response.status).toBe(422);
    const body = (await response.json()) as { error: { code: string; problems: Array<{ field: string }> } };
    expect(body.error.code).toBe("validation_error");
    expect(body.error.problems.map((problem) => problem.field)).toContain(field);
  });
});
