import { env } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { servedCatalog } from "../../src/ledger/catalog-client";
import { catalogWatch, MAX_LISTENERS } from "../../src/mcp/catalog-watch";
import { catalog } from "../../src/tools";
import { bearer, connect, MCP_URL, rpc, workerFetch } from "./mcp-client";

/**
 * `subscriptions/listen` on the 2026-07-28 revision: a stream that tells a client its tools changed
 * when another catalog goes live in the deployment (a deploy, or a reload under `wrangler dev`),
 * and never because of a call. A test plays the new deployment's first isolate by announcing its
 * catalog to the beacon, as that isolate's first request does.
 */

const VERSION = "2026-07-28";
const AGENT = "acme-agent-key";

function headersFor(key: string, method: string, name?: string): Record<string, string> {
  return {
    ...bearer(key),
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
    "mcp-method": method,
    ...(name === undefined ? {} : { "mcp-name": name }),
  };
}

const meta = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientCapabilities": {},
};

type Message = {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
};

/** The messages of an event stream as they arrive; `next` gives up after `ms` and answers null. */
function framesOf(response: Response) {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let ended = false;
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  async function next(ms = 800): Promise<Message | null> {
    for (;;) {
      const split = buffered.indexOf("\n\n");
      if (split >= 0) {
        const frame = buffered.slice(0, split);
        buffered = buffered.slice(split + 2);
        const data = frame
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trim())
          .join("\n");
        if (data) return JSON.parse(data) as Message;
        continue; // a keep-alive comment
      }
      if (ended) return null;
      pending ??= reader.read();
      const read = await Promise.race([
        pending,
        new Promise<null>((resolve) => setTimeout(() => resolve(null), ms)),
      ]);
      if (read === null) return null;
      pending = null;
      if (read.done) ended = true;
      else buffered += decoder.decode(read.value, { stream: true });
    }
  }
  return { next, close: () => reader.cancel() };
}

async function listen(notifications: Record<string, unknown>, id: number | string = "listen-1") {
  const response = await workerFetch(MCP_URL, {
    method: "POST",
    headers: headersFor(AGENT, "subscriptions/listen"),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: { notifications, _meta: meta },
    }),
  });
  return response;
}

const announce = (version: string, tools?: Record<string, string>) =>
  env.CATALOG_BEACON.get(env.CATALOG_BEACON.idFromName("catalog")).announce(version, tools);

async function callTool(name: string, args: Record<string, unknown>) {
  return rpc(headersFor(AGENT, "tools/call", name), {
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name, arguments: args, _meta: meta },
  });
}

describe("subscriptions/listen", () => {
  it("acknowledges toolsListChanged and tells the client once another catalog goes live", async () => {
    await announce(await catalog.version());
    const response = await listen({ toolsListChanged: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const stream = framesOf(response);
    const ack = await stream.next();
    expect(ack).toMatchObject({
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { toolsListChanged: true } },
    });

    await announce("cat_next_deploy");
    const changed = await stream.next();
    expect(changed).toMatchObject({ method: "notifications/tools/list_changed" });
    expect(changed?.params?._meta).toMatchObject({ "io.modelcontextprotocol/subscriptionId": "listen-1" });

    // Told once per change: the same live catalog says nothing more; the next one does.
    expect(await stream.next(200)).toBeNull();
    await announce("cat_rollback");
    expect(await stream.next()).toMatchObject({ method: "notifications/tools/list_changed" });
    await stream.close();
  });

  it("tells a client only of a catalog that changed a tool it lists, not of another namespace's", async () => {
    const served = await servedCatalog();
    const tools = served.tools ?? {};
    await announce(served.version, tools);
    const stream = framesOf(await listen({ toolsListChanged: true }));
    expect((await stream.next())?.method).toBe("notifications/subscriptions/acknowledged");

    // A deploy that changed a shipping tool: acme's support agent lists none of them.
    const shipping = { ...tools, "shipping.lookup_shipment": "tv_shipping_changed" };
    await announce("cat_shipping_changed", shipping);
    expect(await stream.next(300)).toBeNull();
    // Then one that changed a tool it lists.
    await announce("cat_refund_changed", { ...shipping, "support.issue_refund": "tv_refund_changed" });
    expect(await stream.next()).toMatchObject({ method: "notifications/tools/list_changed" });
    // And one that added a tool to its namespace.
    await announce("cat_tool_added", {
      ...shipping,
      "support.issue_refund": "tv_refund_changed",
      "support.void_order": "tv_new",
    });
    expect(await stream.next()).toMatchObject({ method: "notifications/tools/list_changed" });
    await stream.close();
  });

  it("says nothing while the agent calls tools: a call never changes the list", async () => {
    await announce(await catalog.version());
    const stream = framesOf(await listen({ toolsListChanged: true }));
    expect((await stream.next())?.method).toBe("notifications/subscriptions/acknowledged");

    const started = await callTool("start_task", {});
    const result = started.json?.result as { structuredContent?: { run_handle?: string } } | undefined;
    const run_handle = result?.structuredContent?.run_handle;
    expect(run_handle).toBeTypeOf("string");
    expect((await callTool("lookup_order", { order_id: "A1001", run_handle })).status).toBe(200);
    const ticket = { customer_id: "C101", priority: "low", summary: "Wants the invoice again.", run_handle };
    expect((await callTool("create_internal_ticket", ticket)).status).toBe(200);

    expect(await stream.next(300)).toBeNull();
    await stream.close();
  });

  it("a filter without toolsListChanged is acknowledged as empty and the stream ends", async () => {
    const stream = framesOf(await listen({ promptsListChanged: true, resourcesListChanged: true }));
    expect(await stream.next()).toMatchObject({
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: {} },
    });
    expect(await stream.next()).toMatchObject({ id: "listen-1", result: { resultType: "complete" } });
    expect(await stream.next()).toBeNull();
  });

  it("refuses a listen without its notifications filter, or without a credential", async () => {
    const answer = await rpc(headersFor(AGENT, "subscriptions/listen"), {
      jsonrpc: "2.0",
      id: 9,
      method: "subscriptions/listen",
      params: { _meta: meta },
    });
    expect(answer.json?.error).toMatchObject({ code: -32602 });
    const { authorization: _, ...anonymous } = headersFor(AGENT, "subscriptions/listen");
    const refused = await rpc(anonymous, {
      jsonrpc: "2.0",
      id: 9,
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true }, _meta: meta },
    });
    expect(refused.status).toBe(401);
  });

  it("a listen the isolate has no room for is refused with -32603, answering that request's id", async () => {
    // The isolate's other streams, held here: the proxy runs in the tests' isolate, so these count
    // against its limit. They ask the beacon only every 10 minutes, long after the test is over.
    const slow = { ...env, CATALOG_WATCH_MS: "600000" };
    const bus = catalogWatch(slow, { namespace: "support", tools: null });
    const held = Array.from({ length: MAX_LISTENERS }, () => bus.subscribe(() => {}));
    try {
      const refused = await rpc(headersFor(AGENT, "subscriptions/listen"), {
        jsonrpc: "2.0",
        id: "listen-full",
        method: "subscriptions/listen",
        params: { notifications: { toolsListChanged: true }, _meta: meta },
      });
      expect(refused.status).toBe(200);
      expect(refused.json).toEqual({
        jsonrpc: "2.0",
        id: "listen-full",
        error: { code: -32603, message: expect.stringMatching(/^Subscription limit reached/) },
      });
    } finally {
      for (const stop of held) stop();
    }
  });

  it("the SDK client on 2026-07-28 listens by itself and hears of a new catalog", async () => {
    await announce(await catalog.version());
    let heard: (tools: unknown) => void = () => {};
    const changed = new Promise((resolve) => {
      heard = resolve;
    });
    const client = new Client(
      { name: "listening-client", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: VERSION } },
        listChanged: { tools: { onChanged: (_error, tools) => heard(tools), debounceMs: 0 } },
      },
    );
    await connect(AGENT, { client });
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    // The client opens its listen stream on its own after connecting, perhaps only after this
    // announcement: the stream compares what is live with the catalog it was served, so it tells
    // of the change either way.
    await announce("cat_next_deploy");
    const tools = (await changed) as Array<{ name: string }> | null;
    expect(tools?.map((tool) => tool.name)).toContain("start_task");
    await client.close();
  });
});
