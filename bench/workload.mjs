// What the benchmark sends: the same order lookup straight to the sandbox and through the proxy, a
// ticket written through the proxy and its replay, and a hello. Every answer is checked, so a
// refused call fails the run instead of being timed as a fast one.
import { mintUpstreamCredential } from "./credential.mjs";
import { expectOk, okJson, send } from "./http.mjs";

// initech is the load-test tenant (wrangler.toml): ceilings of 10,000 calls and 1,000 writes a run,
// rate limits a benchmark does not reach. Its orders are I3001-I3020, its customers C300-C305
// (sandbox/src/seed.ts).
const TENANT_KEY = "initech-demo-key";
// The agent key of initech's `bench` profile, which the bench adds to the proxy's configuration
// (stack.mjs) for the MCP session calls.
export const BENCH_AGENT_KEY = "initech-bench-agent-key";
export const BENCH_PROFILE = "bench";
const MCP_VERSION = "2025-06-18";
const ORDERS = 20;
export const RUN_LIMITS = { max_calls: 10_000, max_writes: 1_000, deadline_s: 3_600 };

const orderId = (index) => `I${3001 + (index % ORDERS)}`;
// Each run's tickets are its own: the same ticket from another run is the same effect, which the
// proxy holds for a human (docs/guarantees.md, "Effects across runs"), so a run's first write is a new effect.
const ticket = (index, runId) => ({
  customer_id: `C30${index % 6}`,
  priority: "low",
  summary: `Benchmark ticket number ${index} of ${runId} for the ledger.`,
});

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
    Array.from({ length: ORDERS }, (_, index) =>
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
    /** The floor worker: one object hop and one INSERT, into object `object` (default "floor"). */
    floor: async (object) => {
      const query = object === undefined ? "" : `?object=${encodeURIComponent(object)}`;
      expectOk("the floor worker", await send(`${urls.floor}/${query}`));
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
          headers: { authorization: `Bearer ${credentials[index % ORDERS]}` },
        }),
      );
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
