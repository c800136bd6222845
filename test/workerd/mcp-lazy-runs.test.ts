import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseKeyList } from "../../src/auth/keys";
import { signToken } from "../../src/auth/signed-token";
import { tenantObject } from "../../src/config/placement";
import type { RunLedger } from "../../src/ledger/run-ledger";
import { type SessionIdClaims, verifySessionId } from "../../src/mcp/session";
import { TOKEN_GRACE_MS } from "../../src/runs/open-run";
import type { RunStatus } from "../../src/wire/run-status";
import type { TraceEntry } from "../../src/wire/trace-entry";
import { asOperator, KEYS, request, restartDurableObject } from "./helpers";
import { bearer, connect, envelopeOf, INITIALIZE, MCP_URL, rpc, textOf, workerFetch } from "./mcp-client";

/**
 * An MCP session's run opens when work starts: `initialize` reserves the run's id in the session id,
 * listing and pinging need no run, and the first `tools/call` opens it.
 */

const ACME_AGENT = "acme-agent-key";
/** umbrella may open 4 runs per 60 s (wrangler.toml); its agent profile runs in support. */
const UMBRELLA_AGENT = "umbrella-agent-key";

const RUN_TOKEN_KEYS = () => parseKeyList("RUN_TOKEN_KEYS", env.RUN_TOKEN_KEYS);

async function claimsOf(sessionId: string | undefined): Promise<SessionIdClaims> {
  const claims = await verifySessionId(sessionId ?? "", RUN_TOKEN_KEYS());
  if (!claims) throw new Error(`not a session id: ${sessionId}`);
  return claims;
}

function ledgerOf(claims: SessionIdClaims) {
  return env.RUN_LEDGER.get(
    env.RUN_LEDGER.idFromName(`${claims.tenant}/${claims.run}`),
  ) as DurableObjectStub<RunLedger>;
}

/** The tables the run's ledger holds: none while nothing was ever stored there. */
function tablesOf(claims: SessionIdClaims): Promise<string[]> {
  return runInDurableObject(ledgerOf(claims), (_instance, state) =>
    state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'")
      .toArray()
      .map((row) => row.name),
  );
}

function statusOf(claims: SessionIdClaims): Promise<RunStatus | null> {
  return ledgerOf(claims).status(claims.tenant);
}

/** The tenant's run-open bucket lives in its limiter's memory: a restart gives a full bucket. */
function refillRunOpens(tenant: string): Promise<void> {
  return restartDurableObject(tenantObject(env, env.RATE_LIMITER, tenant, tenant));
}

function openByRest(tenant: keyof typeof KEYS) {
  return request("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${KEYS[tenant]}`, "content-type": "application/json" },
    body: JSON.stringify({ namespace: "support" }),
  });
}

const lookup = (order_id: string) => ({ name: "lookup_order", arguments: { order_id } });

describe("a session opens its run at its first tools/call", () => {
  it("initialize, tools/list and ping open nothing and store nothing", async () => {
    const { client, transport } = await connect(ACME_AGENT);
    const claims = await claimsOf(transport.sessionId);
    expect(claims).toMatchObject({ tenant: "acme", profile: "support", ns: "support" });
    expect(claims.open_by).toBeGreaterThan(Date.now());
    expect(claims.exp).toBe((claims.open_by ?? 0) + TOKEN_GRACE_MS);

    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("lookup_order");
    await client.ping();
    const again = await rpc({ ...bearer(ACME_AGENT), "mcp-session-id": transport.sessionId ?? "" });
    expect(again.status).toBe(200);

    expect(await statusOf(claims)).toBeNull();
    expect(await tablesOf(claims)).toEqual([]);
    const { body } = await asOperator("/v1/runs?state=all&limit=100");
    const listed = (body.data as { runs: Array<{ run_id: string }> }).runs.map((run) => run.run_id);
    expect(listed).not.toContain(claims.run);
  });

  it("spends no run-open token until the first call: six sessions that only list leave umbrella's four", async () => {
    await refillRunOpens("umbrella");
    for (let i = 0; i < 6; i += 1) {
      const { client, transport } = await connect(UMBRELLA_AGENT);
      await client.listTools();
      expect(await tablesOf(await claimsOf(transport.sessionId))).toEqual([]);
    }
    for (let i = 0; i < 4; i += 1) expect((await openByRest("umbrella")).status).toBe(201);
    const fifth = await openByRest("umbrella");
    expect(fifth.status).toBe(429);
    expect(fifth.body.error?.details).toMatchObject({ scope: "runs_opened" });
  });

  it("opens the run under the reserved id, with the profile's limits, at the first call", async () => {
    const { client, transport } = await connect(ACME_AGENT);
    const claims = await claimsOf(transport.sessionId);
    const read = envelopeOf(await client.callTool(lookup("A1002")));
    expect(read.outcome).toBe("success");
    expect(read.budget).toMatchObject({ calls_left: 59, destructive_left: 2 });
    const status = await statusOf(claims);
    expect(status).toMatchObject({ run_id: claims.run, namespace: "support", state: "open" });
    expect(status?.limits).toMatchObject({ max_calls: 60, max_destructive: 2 });
    // The run ends with its session, never after it.
    expect(Date.parse(status?.deadline_at ?? "")).toBeLessThanOrEqual(claims.open_by ?? 0);
    // The second call is the same run's.
    expect(envelopeOf(await client.callTool(lookup("A1002"))).budget?.calls_left).toBe(58);
  });

  it("opens one run for several concurrent first calls", async () => {
    const { client, transport } = await connect(ACME_AGENT);
    const claims = await claimsOf(transport.sessionId);
    const orders = ["A1001", "A1002", "A1003", "A1004"];
    const answers = await Promise.all(orders.map((order) => client.callTool(lookup(order))));
    for (const answer of answers) expect(envelopeOf(answer).outcome).toBe("success");
    const status = await statusOf(claims);
    expect(status).toMatchObject({ run_id: claims.run, state: "open" });
    expect(status?.used.calls_used).toBe(orders.length);
    const trace = (await ledgerOf(claims).readTrace(claims.tenant)) as { entries: TraceEntry[] } | null;
    const entries = (trace?.entries ?? []).filter((entry) => entry.tool === "lookup_order");
    expect(entries).toHaveLength(orders.length);
  });

  it("answers a refused open (the run-open rate limit) as the call's tool error, and a later call opens the run", async () => {
    await refillRunOpens("umbrella");
    const { client, transport } = await connect(UMBRELLA_AGENT);
    const claims = await claimsOf(transport.sessionId);
    for (let i = 0; i < 4; i += 1) expect((await openByRest("umbrella")).status).toBe(201);

    const refused = await client.callTool(lookup("U0001"));
    expect(refused.isError).toBe(true);
    expect(envelopeOf(refused).error).toMatchObject({
      code: "rate_limited",
      details: { scope: "runs_opened", limit: 4 },
      retry_after_ms: expect.any(Number),
    });
    expect(textOf(refused)).toMatch(/rate_limited/);
    // Nothing ran and nothing was stored; the session lives on.
    expect(await statusOf(claims)).toBeNull();
    expect(await tablesOf(claims)).toEqual([]);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);

    await refillRunOpens("umbrella");
    const called = envelopeOf(await client.callTool(lookup("U0001")));
    // umbrella has no sandbox data: the lookup ran in the session's run and found no such order.
    expect(called.error?.code).not.toBe("rate_limited");
    expect(called.budget).toMatchObject({ calls_left: 9 });
    expect(await statusOf(claims)).toMatchObject({ run_id: claims.run, state: "open" });
  });

  it("DELETE of a session that never called succeeds and ends nothing", async () => {
    const { client, transport } = await connect(ACME_AGENT);
    const claims = await claimsOf(transport.sessionId);
    await client.listTools();
    await transport.terminateSession();
    expect(transport.sessionId).toBeUndefined();
    expect(await statusOf(claims)).toBeNull();
    expect(await tablesOf(claims)).toEqual([]);
  });

  it("DELETE after the first call ends the run, and the session is then 404", async () => {
    const { client, transport } = await connect(ACME_AGENT);
    const sessionId = transport.sessionId ?? "";
    const claims = await claimsOf(sessionId);
    expect(envelopeOf(await client.callTool(lookup("A1002"))).outcome).toBe("success");
    await transport.terminateSession();
    expect((await statusOf(claims))?.state).toBe("closed");
    const after = await rpc(
      { ...bearer(ACME_AGENT), "mcp-session-id": sessionId },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: lookup("A1002"),
      },
    );
    expect(after.status).toBe(404);
    // The ended run is not opened again.
    expect((await statusOf(claims))?.state).toBe("closed");
  });

  it("answers a session past its deadline without a run as 404, opening nothing", async () => {
    const { transport } = await connect(ACME_AGENT);
    const claims = await claimsOf(transport.sessionId);
    const late: SessionIdClaims = { ...claims, open_by: Date.now() + 500 };
    const sessionId = await signToken("ms1", late, RUN_TOKEN_KEYS());
    const { status, json } = await rpc(
      { ...bearer(ACME_AGENT), "mcp-session-id": sessionId },
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: lookup("A1002"),
      },
    );
    expect(status).toBe(404);
    expect(json).toMatchObject({ error: { code: -32001 } });
    expect(await statusOf(claims)).toBeNull();
  });

  it("another agent's reserved session id is 404 and opens nothing", async () => {
    const { transport } = await connect(ACME_AGENT);
    const claims = await claimsOf(transport.sessionId);
    const { status } = await rpc(
      { ...bearer("globex-agent-key"), "mcp-session-id": transport.sessionId ?? "" },
      {
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: lookup("A1002"),
      },
    );
    expect(status).toBe(404);
    expect(await statusOf(claims)).toBeNull();
  });

  it("with X-Task-Key, initialize opens the task's run at once, and a second session of the task finds it", async () => {
    const headers = { ...bearer(ACME_AGENT), "x-task-key": `lazy-${crypto.randomUUID()}` };
    const first = await workerFetch(MCP_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body: JSON.stringify(INITIALIZE),
    });
    expect(first.status).toBe(200);
    const claims = await claimsOf(first.headers.get("mcp-session-id") ?? "");
    expect(claims.open_by).toBeUndefined();
    expect(await statusOf(claims)).toMatchObject({ run_id: claims.run, state: "open" });
    const second = await rpc(headers, INITIALIZE);
    expect(second.status).toBe(200);
    expect((await claimsOf(second.headers.get("mcp-session-id") ?? "")).run).toBe(claims.run);
  });
});
