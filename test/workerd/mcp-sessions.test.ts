import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Client, type StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { parseKeyList } from "../../src/auth/keys";
import type { RunLedger } from "../../src/ledger/run-ledger";
import { SESSION_ACTIVITY_KEY, SESSION_STAMP_INTERVAL_MS } from "../../src/ledger/session-activity";
import { SESSION_IDLE_MS, verifySessionId } from "../../src/mcp/session";
import { catalog } from "../../src/tools";
import type { ApprovalDetail } from "../../src/wire/approval-answers";
import { MAX_CALL_BODY_BYTES } from "../../src/wire/requests";
import { asOperator, decide, openRun, refundsOf, restartDurableObject } from "./helpers";
import { bearer, connect, envelopeOf, INITIALIZE, MCP_URL, rpc, workerFetch } from "./mcp-client";

const AGENT_KEYS = { acme: "acme-agent-key", acmeNext: "acme-next-agent-key", globex: "globex-agent-key" };

interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
  id: string;
  run: string;
  tenant: string;
}

/** An MCP session as a real client opens it: a static agent key, the SDK's own session handling. */
async function openSession(key: string = AGENT_KEYS.acme, client?: Client): Promise<Session> {
  const { client: connected, transport } = await connect(key, client ? { client } : {});
  const id = transport.sessionId ?? "";
  const claims = await verifySessionId(id, parseKeyList("RUN_TOKEN_KEYS", env.RUN_TOKEN_KEYS));
  if (!claims) throw new Error(`initialize answered no valid session id: ${id}`);
  return { client: connected, transport, id, run: claims.run, tenant: claims.tenant };
}

/** A session that has made its first call, so its run is open (a session's run opens at its first tools/call). */
async function openWorkingSession(key: string = AGENT_KEYS.acme, order = "A1002"): Promise<Session> {
  const session = await openSession(key);
  expect(envelopeOf(await session.client.callTool(lookup(order))).outcome).toBe("success");
  return session;
}

function ledgerOf(session: Session) {
  return env.RUN_LEDGER.get(
    env.RUN_LEDGER.idFromName(`${session.tenant}/${session.run}`),
  ) as DurableObjectStub<RunLedger>;
}

async function runState(session: Session) {
  return (await ledgerOf(session).status(session.tenant))?.state;
}

const lookup = (order_id = "A1002") => ({ name: "lookup_order", arguments: { order_id } });

/** A session's tools/call as a raw request, for answers the SDK client would turn into a throw. */
const callRequest = (order_id = "A1002") => ({
  jsonrpc: "2.0",
  id: 7,
  method: "tools/call",
  params: lookup(order_id),
});

/**
 * Counts the requests the run ledgers get from now on, by method: every RPC method of the ledger's
 * class is wrapped where its instances find it. A method a ledger calls on itself is a private one,
 * so each count is one request from the worker. The returned function reads and stops the count.
 */
async function countLedgerRequests(session: Session): Promise<() => Record<string, number>> {
  const counts: Record<string, number> = {};
  const restore: Array<() => void> = [];
  await runInDurableObject(ledgerOf(session), (instance) => {
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const method = prototype[name];
      if (name === "constructor" || typeof method !== "function") continue;
      prototype[name] = function (this: unknown, ...args: unknown[]) {
        counts[name] = (counts[name] ?? 0) + 1;
        return method.apply(this, args);
      };
      restore.push(() => {
        prototype[name] = method;
      });
    }
  });
  return () => {
    for (const undo of restore) undo();
    return counts;
  };
}

describe("one MCP session of an agent key is one run", () => {
  it("runs a whole session: list, read, a refund an operator approves, and DELETE ends the run", async () => {
    const session = await openSession();
    expect(session.id).toMatch(/^ms1\./);
    expect(session.tenant).toBe("acme");

    const { tools } = await session.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(catalog.tools("support").map((tool) => tool.name));

    const read = envelopeOf(await session.client.callTool(lookup()));
    expect(read.outcome).toBe("success");
    // The acme support profile's limits, not the tenant's defaults: 60 calls, 2 destructive.
    expect(read.budget).toMatchObject({ calls_left: 59, destructive_left: 2 });

    const args = { order_id: "A1003", amount_cents: 120, reason: "user_cancel" };
    const asked = envelopeOf(await session.client.callTool({ name: "issue_refund", arguments: args }));
    expect(asked.error?.code).toBe("approval_required");
    const approvalId = asked.approval?.id ?? "";
    expect((await decide(approvalId, "approve", "verified by phone")).status).toBe(200);

    const executed = envelopeOf(await session.client.callTool({ name: "issue_refund", arguments: args }));
    expect(executed.outcome).toBe("success");
    expect(executed.approval).toMatchObject({ id: approvalId, state: "executed" });
    expect((await refundsOf("A1003")).filter((refund) => refund.run_id === session.run)).toHaveLength(1);

    // The operator's view of the approval shows the session's own run, holding every call it made.
    const detail = (await asOperator(`/v1/approvals/${approvalId}`)).body.data as ApprovalDetail;
    expect(detail.run).toMatchObject({ run_id: session.run, state: "open", limits: { max_calls: 60 } });
    const callIds = detail.trace.map((entry) => entry.call_id);
    expect(callIds).toEqual(expect.arrayContaining([read.call_id, asked.call_id, executed.call_id]));

    await session.transport.terminateSession();
    expect(session.transport.sessionId).toBeUndefined();
    const after = await rpc({ ...bearer(AGENT_KEYS.acme), "mcp-session-id": session.id });
    expect(after.status).toBe(404);
    expect(after.json).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: -32001 } });
    expect(await runState(session)).toBe("closed");
    const closed = (await asOperator(`/v1/approvals/${approvalId}`)).body.data as ApprovalDetail;
    expect(closed.run?.state).toBe("closed");
  });

  it("makes two sessions of one key two runs, with their own budgets and idempotency keys", async () => {
    const first = await openSession();
    const second = await openSession();
    expect(second.id).not.toBe(first.id);
    expect(second.run).not.toBe(first.run);
    for (const session of [first, second]) {
      expect(envelopeOf(await session.client.callTool(lookup())).budget?.calls_left).toBe(59);
    }
    const ticket = {
      name: "create_internal_ticket",
      arguments: { customer_id: "C101", priority: "low", summary: "Two sessions, two runs, two keys." },
    };
    const one = envelopeOf(await first.client.callTool(ticket));
    const two = envelopeOf(await second.client.callTool(ticket));
    expect(one.idempotency_key).toMatch(/^idk_/);
    expect(two.idempotency_key).not.toBe(one.idempotency_key);
    expect(one.budget?.calls_left).toBe(58);
    expect(two.budget?.calls_left).toBe(58);
  });

  it("serves a session with any current key of its profile, so rotating an agent key keeps it", async () => {
    const session = await openSession(AGENT_KEYS.acme);
    const other = await rpc({ ...bearer(AGENT_KEYS.acmeNext), "mcp-session-id": session.id });
    expect(other.status).toBe(200);
    expect(other.json).toMatchObject({ id: 1, result: { tools: expect.any(Array) } });
    const fresh = await openSession(AGENT_KEYS.acmeNext);
    expect(envelopeOf(await fresh.client.callTool(lookup())).outcome).toBe("success");
  });

  it("a client that probes for the 2026 revision first now speaks it: no session, runs by start_task", async () => {
    const client = new Client({ name: "t", version: "1" }, { versionNegotiation: { mode: "auto" } });
    const { transport } = await connect(AGENT_KEYS.acme, { client });
    expect(transport.sessionId).toBeUndefined();
    expect((await client.listTools()).tools[0]?.name).toBe("start_task");
  });
});

describe("a session that is not this agent's, or no longer live, is 404", () => {
  it("answers a forged, foreign, malformed or run-token session id with 404 and leaves the owner's run alone", async () => {
    const acme = await openWorkingSession(AGENT_KEYS.acme);
    const globex = await openWorkingSession(AGENT_KEYS.globex, "B2001");
    const run = await openRun("acme");
    const forged = [
      `${acme.id.slice(0, -4)}AAAA`,
      // acme's own claims re-labelled as globex's, keeping acme's signature.
      acme.id.replace(acme.id.split(".")[1] ?? "", btoa(JSON.stringify({ tenant: "globex" }))),
      "ms1.not.valid",
      run.token,
    ];
    for (const id of forged) {
      const { status, json } = await rpc({ ...bearer(AGENT_KEYS.acme), "mcp-session-id": id });
      expect(status, id).toBe(404);
      expect(json).toMatchObject({ error: { code: -32001 } });
    }
    // Another tenant's genuine session, presented with this tenant's key: 404, and nothing closed.
    const foreign = await rpc({ ...bearer(AGENT_KEYS.acme), "mcp-session-id": globex.id });
    expect(foreign.status).toBe(404);
    expect(await runState(globex)).toBe("open");
    expect(envelopeOf(await globex.client.callTool(lookup("B2001"))).outcome).toBe("success");
    expect(envelopeOf(await acme.client.callTool(lookup())).outcome).toBe("success");
  });

  it("refuses a session whose run passed its deadline, and closes the run", async () => {
    const session = await openWorkingSession();
    const stub = ledgerOf(session);
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE run SET deadline_at = ?", Date.now() - 1_000);
    });
    // A fresh instance reads the run as it is now stored.
    await restartDurableObject(stub);
    const { status, json } = await rpc({ ...bearer(AGENT_KEYS.acme), "mcp-session-id": session.id });
    expect(status).toBe(404);
    expect(json).toMatchObject({ error: { code: -32001 } });
    expect(await runState(session)).toBe("closed");
    await expect(session.client.callTool(lookup())).rejects.toThrow(/404|Session not found/);
  });

  it("refuses a session idle longer than the idle limit, and closes the run", async () => {
    const session = await openSession();
    expect(envelopeOf(await session.client.callTool(lookup())).outcome).toBe("success");
    // Stored more than the idle limit and a stamp's interval ago: even a request a minute after the
    // stored time, which stored nothing, left the session idle longer than the limit.
    await runInDurableObject(ledgerOf(session), (_instance, state) => {
      state.storage.kv.put(
        SESSION_ACTIVITY_KEY,
        Date.now() - SESSION_IDLE_MS - SESSION_STAMP_INTERVAL_MS - 1_000,
      );
    });
    const { status } = await rpc({ ...bearer(AGENT_KEYS.acme), "mcp-session-id": session.id });
    expect(status).toBe(404);
    expect(await runState(session)).toBe("closed");
  });

  it("keeps a session alive while it is used within the idle limit", async () => {
    const session = await openWorkingSession();
    await runInDurableObject(ledgerOf(session), (_instance, state) => {
      state.storage.kv.put(SESSION_ACTIVITY_KEY, Date.now() - SESSION_IDLE_MS + 60_000);
    });
    expect(envelopeOf(await session.client.callTool(lookup())).outcome).toBe("success");
    // That request counted as activity: the session is fresh again.
    const touched = await runInDurableObject(ledgerOf(session), (_instance, state) =>
      state.storage.kv.get<number>(SESSION_ACTIVITY_KEY),
    );
    expect(touched).toBeGreaterThan(Date.now() - 60_000);
  });

  it("stores a session's activity at most once a minute, so its requests commit nothing of their own", async () => {
    const session = await openWorkingSession();
    const stored = Date.now() - 30_000;
    await runInDurableObject(ledgerOf(session), (_instance, state) => {
      state.storage.kv.put(SESSION_ACTIVITY_KEY, stored);
    });
    expect(envelopeOf(await session.client.callTool(lookup())).outcome).toBe("success");
    await session.client.listTools();
    const after = await runInDurableObject(ledgerOf(session), (_instance, state) =>
      state.storage.kv.get<number>(SESSION_ACTIVITY_KEY),
    );
    expect(after).toBe(stored);
  });

  it("never ends a session within the idle limit of its last request, though that request stored nothing", async () => {
    const session = await openWorkingSession();
    // Stored past the idle limit, but less than a stamp's interval past it: a later request that
    // stored nothing may have come within the limit, so the session goes on.
    await runInDurableObject(ledgerOf(session), (_instance, state) => {
      state.storage.kv.put(SESSION_ACTIVITY_KEY, Date.now() - SESSION_IDLE_MS - 30_000);
    });
    expect(envelopeOf(await session.client.callTool(lookup())).outcome).toBe("success");
    expect(await runState(session)).toBe("open");
    const touched = await runInDurableObject(ledgerOf(session), (_instance, state) =>
      state.storage.kv.get<number>(SESSION_ACTIVITY_KEY),
    );
    expect(touched).toBeGreaterThan(Date.now() - 60_000);
  });

  it("makes one request to the run's ledger for a session's tools/call, its session checked with it", async () => {
    const session = await openWorkingSession();
    const counted = await countLedgerRequests(session);
    expect(envelopeOf(await session.client.callTool(lookup())).outcome).toBe("success");
    expect(counted()).toEqual({ sessionCall: 1 });
    // A listing needs no run, only the session's check.
    const listing = await countLedgerRequests(session);
    await session.client.listTools();
    expect(listing()).toEqual({ touchSession: 1 });
  });

  it("opens a reserved run at the first call: the call finds no run, the run opens, the call is made", async () => {
    const session = await openSession();
    const counted = await countLedgerRequests(session);
    expect(envelopeOf(await session.client.callTool(lookup())).outcome).toBe("success");
    // The open asks whether the run exists before it spends a run-open token, as any reserved open does.
    expect(counted()).toEqual({ sessionCall: 2, status: 1, open: 1 });
    expect(await runState(session)).toBe("open");
  });

  it("answers an idle session's tools/call with 404, closes the run and calls nothing", async () => {
    const session = await openWorkingSession();
    await runInDurableObject(ledgerOf(session), (_instance, state) => {
      state.storage.kv.put(
        SESSION_ACTIVITY_KEY,
        Date.now() - SESSION_IDLE_MS - SESSION_STAMP_INTERVAL_MS - 1_000,
      );
    });
    const { status, json } = await rpc(
      { ...bearer(AGENT_KEYS.acme), "mcp-session-id": session.id },
      callRequest(),
    );
    expect(status).toBe(404);
    expect(json).toMatchObject({
      id: 7,
      error: { code: -32001, message: expect.stringMatching(/initialize/) },
    });
    expect(await runState(session)).toBe("closed");
    // Only the first call of the session is in its trace.
    const trace = (await ledgerOf(session).readTrace(session.tenant)) as { entries: unknown[] } | null;
    expect(trace?.entries.length).toBe(1);
  });

  it("answers a tools/call past the run's deadline with 404 and closes the run", async () => {
    const session = await openWorkingSession();
    const stub = ledgerOf(session);
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE run SET deadline_at = ?", Date.now() - 1_000);
    });
    await restartDurableObject(stub);
    const { status, json } = await rpc(
      { ...bearer(AGENT_KEYS.acme), "mcp-session-id": session.id },
      callRequest(),
    );
    expect(status).toBe(404);
    expect(json).toMatchObject({ id: 7, error: { code: -32001 } });
    expect(await runState(session)).toBe("closed");
  });

  it("answers an ended session's call with 404 even when the call itself is refused before the ledger", async () => {
    const session = await openWorkingSession();
    const headers = { ...bearer(AGENT_KEYS.acme), "mcp-session-id": session.id };
    // A bad Prefer header is refused before the ledger, as a validation error while the session is live.
    const live = await rpc({ ...headers, prefer: "wait=soon" }, callRequest());
    expect(live.status).toBe(200);
    expect(JSON.stringify(live.json)).toMatch(/validation_error/);
    await ledgerOf(session).end(session.tenant);
    const ended = await rpc({ ...headers, prefer: "wait=soon" }, callRequest());
    expect(ended.status).toBe(404);
    expect(ended.json).toMatchObject({ id: 7, error: { code: -32001 } });
    expect((await rpc(headers, callRequest())).status).toBe(404);
  });

  it("answers a repeated DELETE of a session with 404", async () => {
    const session = await openWorkingSession();
    const remove = () =>
      workerFetch(MCP_URL, {
        method: "DELETE",
        headers: { ...bearer(AGENT_KEYS.acme), "mcp-session-id": session.id },
      });
    expect((await remove()).status).toBe(200);
    expect((await remove()).status).toBe(404);
  });
});

describe("what a session needs on every request", () => {
  it("reads a body framed by its length or streamed, and refuses one over the call limit either way (413)", async () => {
    const headers = {
      ...bearer(AGENT_KEYS.acme),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    const framed = (text: string) => ({
      method: "POST",
      headers: { ...headers, "content-length": String(new TextEncoder().encode(text).byteLength) },
      body: text,
    });
    const streamed = (text: string) => ({
      method: "POST",
      headers,
      body: new Blob([text]).stream(),
      duplex: "half",
    });
    for (const send of [framed, streamed]) {
      const opened = await workerFetch(MCP_URL, send(JSON.stringify(INITIALIZE)));
      expect(opened.status).toBe(200);
      expect(opened.headers.get("mcp-session-id")).toMatch(/^ms1\./);
      const oversized = JSON.stringify({
        ...INITIALIZE,
        params: { ...INITIALIZE.params, pad: "x".repeat(MAX_CALL_BODY_BYTES) },
      });
      const refused = await workerFetch(MCP_URL, send(oversized));
      expect(refused.status).toBe(413);
      expect(refused.headers.get("mcp-session-id")).toBeNull();
      expect(await refused.json()).toMatchObject({
        jsonrpc: "2.0",
        error: { code: -32000, message: expect.stringMatching(/too large/i) },
      });
    }
  });

  it("asks an agent key without a session id to initialize first (400)", async () => {
    const { status, json } = await rpc(bearer(AGENT_KEYS.acme));
    expect(status).toBe(400);
    expect(json).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: -32000 } });
    expect(JSON.stringify(json)).toContain("initialize first");
  });

  it("refuses a session id without the agent's credential, or with a bad one, as 401 with the challenge", async () => {
    const session = await openWorkingSession();
    const challenge =
      'Bearer resource_metadata="https://proxy.test/.well-known/oauth-protected-resource/mcp"';
    for (const headers of [{}, bearer("acme-agent-key-wrong")]) {
      for (const method of ["POST", "DELETE"]) {
        const response = await workerFetch(MCP_URL, {
          method,
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-session-id": session.id,
            ...headers,
          },
          body:
            method === "POST" ? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) : undefined,
        });
        expect(response.status, method).toBe(401);
        const header = response.headers.get("www-authenticate") ?? "";
        expect(header === challenge || header.endsWith(challenge.replace("Bearer ", ", ")), header).toBe(
          true,
        );
      }
    }
    // The tenant key is no agent credential either, and none of it touched the session's run.
    expect((await rpc({ ...bearer("acme-demo-key"), "mcp-session-id": session.id })).status).toBe(401);
    expect(await runState(session)).toBe("open");
  });

  it("refuses an unsupported MCP-Protocol-Version header within a session (400), as the transport does", async () => {
    const session = await openSession();
    const { status } = await rpc({
      ...bearer(AGENT_KEYS.acme),
      "mcp-session-id": session.id,
      "mcp-protocol-version": "1999-01-01",
    });
    expect(status).toBe(400);
  });

  it("opens a run for an OAuth grant's props like an agent key of that profile", async () => {
    const oauth = (props: unknown) => ({
      waitUntil: () => {},
      passThroughOnException: () => {},
      props,
    });
    const post = (props: unknown, body: unknown, headers: Record<string, string> = {}) =>
      app.fetch(
        new Request(MCP_URL, {
          method: "POST",
          headers: {
            authorization: "Bearer an-oauth-access-token",
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...headers,
          },
          body: JSON.stringify(body),
        }),
        env,
        oauth(props) as ExecutionContext,
      );
    const grant = { tenant: "acme", profile: "support" };
    const initialize = {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    const opened = await post(grant, initialize);
    expect(opened.status).toBe(200);
    const sessionId = opened.headers.get("mcp-session-id") ?? "";
    expect(sessionId).toMatch(/^ms1\./);
    const listed = await post(
      grant,
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { "mcp-session-id": sessionId },
    );
    expect(listed.status).toBe(200);
    // Same tenant and profile: the agent key of that profile may carry the session on.
    expect((await rpc({ ...bearer(AGENT_KEYS.acme), "mcp-session-id": sessionId })).status).toBe(200);
    // Another tenant's grant may not, and a grant for a profile that no longer exists is refused.
    const foreign = await post(
      { tenant: "globex", profile: "support" },
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      {
        "mcp-session-id": sessionId,
      },
    );
    expect(foreign.status).toBe(404);
    const stale = await post({ tenant: "acme", profile: "retired" }, initialize);
    expect(stale.status).toBe(401);
    expect(stale.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
  });

  it("keeps a run token's connection stateless: no session id issued, DELETE not allowed", async () => {
    const run = await openRun("acme");
    const { transport } = await connect(run.token);
    expect(transport.sessionId).toBeUndefined();
    const response = await workerFetch(MCP_URL, {
      method: "DELETE",
      headers: { ...bearer(run.token), "mcp-session-id": "ms1.any.thing" },
    });
    expect(response.status).toBe(405);
  });
});
