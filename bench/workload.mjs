// What the benchmark sends: the same order lookup straight to the sandbox and through the proxy, a
// ticket written through the proxy and its replay, the same write's two sandbox requests sent
// straight to the sandbox, and a hello. Every answer is checked, so a
// refused call fails the run instead of being timed as a fast one.
import { createHash } from "node:crypto";
import { mintUpstreamCredential } from "./credential.mjs";
import { expectOk, okJson, send } from "./http.mjs";

// initech is the load-test tenant (wrangler.toml): ceilings of 10,000 calls and 1,000 writes a run,
// rate limits a benchmark does not reach. Its orders are I3001-I3300, its customers C300-C305
// (sandbox/src/seed.ts).
const TENANT_KEY = "initech-demo-key";
// The agent key of initech's `bench` profile, which the bench adds to the proxy's configuration
// (stack.mjs) for the MCP session calls.
export const BENCH_AGENT_KEY = "initech-bench-agent-key";
export const BENCH_PROFILE = "bench";
const MCP_VERSION = "2025-06-18";
/**
 * The orders the reads name, in turn. More than the proxy keeps recently signed upstream
 * credentials for (RECENT_CREDENTIALS_MAX in src/upstream/authorize.ts), so a read never reuses the
 * credential a read of the same order signed a moment before: every proxied read signs its own, as
 * a production read of a new request does, in one run as over many.
 */
export const READ_ORDERS = 300;
export const RUN_LIMITS = { max_calls: 10_000, max_writes: 1_000, deadline_s: 3_600 };

const orderId = (index) => `I${3001 + (index % READ_ORDERS)}`;
// Each run's tickets are its own: the same ticket from another run is the same effect, which the
// proxy holds for a human (docs/guarantees.md, "Effects across runs"), so a run's first write is a new effect.
const ticket = (index, runId) => ({
  customer_id: `C30${index % 6}`,
  priority: "low",
  summary: `Benchmark ticket number ${index} of ${runId} for the ledger.`,
});

/**
 * A ticket's body as the proxy sends it (src/machine/request.ts, `buildRequest`): canonical JSON,
 * keys sorted, no whitespace. The credential binds these exact bytes, so a direct request must send
 * them too; the ticket's values are plain strings, which JSON.stringify writes as canonical JSON does.
 */
const ticketBody = (fields) =>
  JSON.stringify(Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));

/**
 * The requests of one stack (`startStack`'s URLs and secrets). URLs are read at each request, so
 * the workload follows the stack across a restart.
 */
export async function workloadFor(stack) {
  const { secrets } = stack;
  const urls = {
    get proxy() {
      return stack.urls.proxy;
    },
    get sandbox() {
      return stack.urls.sandbox;
    },
    get hello() {
      return stack.urls.hello;
    },
    get floor() {
      return stack.urls.floor;
    },
  };
  // A credential is good for one request, so each order's lookup has its own, minted before timing.
  const credentials = await Promise.all(
    Array.from({ length: READ_ORDERS }, (_, index) =>
      mintUpstreamCredential(
        {
          tenant: "initech",
          run: "bench-direct",
          tool: "lookup_order",
          exp: Date.now() + 3_600_000,
          request: { method: "GET", target: `/orders/${orderId(index)}`, body: null, idempotency_key: null },
        },
        secrets.UPSTREAM_SIGNING_KEYS,
      ),
    ),
  );
  const json = { "content-type": "application/json" };
  /** A credential for one request straight to the sandbox, as the proxy would sign it. */
  const mintDirect = (tool, request) =>
    mintUpstreamCredential(
      { tenant: "initech", run: "bench-direct", tool, exp: Date.now() + 3_600_000, request },
      secrets.UPSTREAM_SIGNING_KEYS,
    );

  /** A tool call through the proxy; its envelope must be a success (and a replay when `replayed`). */
  async function call(run, tool, args, { replayed = false } = {}) {
    const envelope = okJson(
      `${tool} through the proxy`,
      await send(`${urls.proxy}/v1/runs/${run.id}/calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${run.token}`, ...json },
        body: JSON.stringify({ tool, args }),
      }),
    );
    if (envelope.outcome !== "success" || envelope.replayed !== replayed) {
      throw new Error(
        `bench: ${tool} through the proxy answered outcome ${envelope.outcome}, replayed ${envelope.replayed}: ${JSON.stringify(envelope.error ?? null)}`,
      );
    }
  }

  /** A JSON-RPC request to /mcp under the bench agent's key; resolves with the answer and its headers. */
  async function mcp(label, message, headers = {}) {
    const response = expectOk(
      label,
      await send(`${urls.proxy}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${BENCH_AGENT_KEY}`,
          accept: "application/json, text/event-stream",
          ...json,
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: "2.0", ...message }),
      }),
    );
    const answer = JSON.parse(response.body.toString("utf8"));
    if (answer.error) throw new Error(`bench: ${label} answered ${JSON.stringify(answer.error)}`);
    return { answer, headers: response.headers };
  }

  return {
    /**
     * The floor worker: one object hop and one INSERT, into object `object` (default "floor").
     * Resolves with whether the object was constructed for this hit (it had left memory, or was new).
     */
    floor: async (object) => {
      const query = object === undefined ? "" : `?object=${encodeURIComponent(object)}`;
      return (
        expectOk("the floor worker", await send(`${urls.floor}/${query}`)).body.toString("utf8") === "woken"
      );
    },
    /**
     * The floor worker whose object fetches the hello worker through a service binding before its
     * INSERT: one object hop, one upstream hop, one commit.
     */
    floorThroughUpstream: async () => {
      expectOk("the floor worker through its upstream", await send(`${urls.floor}/?upstream`));
    },
    /**
     * An MCP 2025-06-18 session of the bench agent (initialize answers its Mcp-Session-Id; its first
     * tools/call opens its run). Resolves with `call(index)`, one lookup_order tools/call.
     */
    async mcpSession() {
      const { headers } = await mcp("MCP initialize", {
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: MCP_VERSION,
          capabilities: {},
          clientInfo: { name: "bench", version: "1" },
        },
      });
      const session = headers["mcp-session-id"];
      if (typeof session !== "string") throw new Error("bench: MCP initialize answered no Mcp-Session-Id");
      const sessionHeaders = { "mcp-session-id": session, "mcp-protocol-version": MCP_VERSION };
      return async (index) => {
        const { answer } = await mcp(
          "MCP tools/call lookup_order",
          {
            id: index + 1,
            method: "tools/call",
            params: { name: "lookup_order", arguments: { order_id: orderId(index) } },
          },
          sessionHeaders,
        );
        if (answer.result?.isError) {
          throw new Error(
            `bench: MCP tools/call answered isError: ${JSON.stringify(answer.result).slice(0, 400)}`,
          );
        }
      };
    },
    /** Opens an initech run in the support namespace. */
    async openRun() {
      const opened = okJson(
        "POST /v1/runs",
        await send(`${urls.proxy}/v1/runs`, {
          method: "POST",
          headers: { authorization: `Bearer ${TENANT_KEY}`, ...json },
          body: JSON.stringify({ namespace: "support", limits: RUN_LIMITS }),
        }),
      );
      return { id: opened.data.run_id, token: opened.data.run_token };
    },
    hello: async () => {
      expectOk("hello", await send(urls.hello));
    },
    directRead: async (index) => {
      expectOk(
        "lookup_order straight to the sandbox",
        await send(`${urls.sandbox}/orders/${orderId(index)}`, {
          headers: { authorization: `Bearer ${credentials[index % READ_ORDERS]}` },
        }),
      );
    },
    /**
     * `count` first writes of create_internal_ticket straight to the sandbox, as the proxy makes
     * them: `POST /tickets` with its Idempotency-Key, then the postcondition's `GET /tickets/{id}`.
     * Each POST's credential is minted here, before any is sent; a GET's needs the ticket id, so it
     * is minted in this process between the two requests, while workerd waits. Resolves with one
     * `send()` per write, each checking both answers.
     */
    async directWrites(count, offset) {
      const label = `bench-direct-${Date.now().toString(36)}`;
      const writes = await Promise.all(
        Array.from({ length: count }, async (_, index) => {
          const body = ticketBody(ticket(offset + index, label));
          // The proxy's key is `idk_` and 64 hex digits (src/core/idempotency-key.ts): the same length here.
          const key = `idk_${createHash("sha256").update(body).digest("hex")}`;
          const credential = await mintDirect("create_internal_ticket", {
            method: "POST",
            target: "/tickets",
            body,
            idempotency_key: key,
          });
          return { body, key, credential };
        }),
      );
      return writes.map(({ body, key, credential }) => async () => {
        const created = okJson(
          "POST /tickets straight to the sandbox",
          await send(`${urls.sandbox}/tickets`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${credential}`,
              accept: "application/json",
              "idempotency-key": key,
              ...json,
            },
            body,
          }),
        );
        const target = `/tickets/${encodeURIComponent(created.ticket_id)}`;
        const read = await mintDirect("lookup_ticket", {
          method: "GET",
          target,
          body: null,
          idempotency_key: null,
        });
        const found = okJson(
          "GET /tickets/{ticket_id} straight to the sandbox",
          await send(`${urls.sandbox}${target}`, {
            headers: { authorization: `Bearer ${read}`, accept: "application/json" },
          }),
        );
        if (found.ticket_id !== created.ticket_id) {
          throw new Error(`bench: the sandbox read ticket ${found.ticket_id} back for ${created.ticket_id}`);
        }
      });
    },
    proxiedRead: (run, index) => call(run, "lookup_order", { order_id: orderId(index) }),
    firstWrite: (run, index) => call(run, "create_internal_ticket", ticket(index, run.id)),
    replay: (run, index) => call(run, "create_internal_ticket", ticket(index, run.id), { replayed: true }),
    /** The first page of a run's trace (100 entries where the endpoint pages); resolves with its body. */
    async tracePage(run) {
      const response = expectOk(
        "GET /v1/runs/{id}/trace",
        await send(`${urls.proxy}/v1/runs/${run.id}/trace?limit=100`, {
          headers: { authorization: `Bearer ${run.token}` },
        }),
      );
      return response.body;
    },
  };
}
