import { describe, expect, it } from "vitest";
import { MAX_CALL_BODY_BYTES } from "../../src/wire/requests";
import { openRun, traceOf } from "./helpers";
import { bearer, INITIALIZE, MCP_URL, rpc, workerFetch } from "./mcp-client";

/**
 * `/mcp` reads a request's body once and hands it on parsed: framed by its Content-Length or
 * streamed, each revision and each credential sees the same answers as when the SDK read it itself.
 */

const VERSION = "2026-07-28";

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

function framed(headers: Record<string, string>, text: string): RequestInit {
  const length = String(new TextEncoder().encode(text).byteLength);
  return { method: "POST", headers: { ...HEADERS, ...headers, "content-length": length }, body: text };
}

function streamed(headers: Record<string, string>, text: string): RequestInit {
  // `duplex` is not in workerd's RequestInit type, but a streamed request body needs it.
  return {
    method: "POST",
    headers: { ...HEADERS, ...headers },
    body: new Blob([text]).stream(),
    duplex: "half",
  } as RequestInit;
}

const currentList = JSON.stringify({
  jsonrpc: "2.0",
  id: 3,
  method: "tools/list",
  params: {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": VERSION,
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
});
const currentHeaders = { "mcp-protocol-version": VERSION, "mcp-method": "tools/list" };
const currentCallHeaders = { ...currentHeaders, "mcp-method": "tools/call", "mcp-name": "lookup_order" };
/** The current revision's `_meta` envelope, as JSON text to put into a params object. */
const CURRENT_META = `"_meta":{"io.modelcontextprotocol/protocolVersion":"${VERSION}","io.modelcontextprotocol/clientCapabilities":{}}`;
/**
 * A `tools/call` of lookup_order with `args` (JSON text), and `envelope` after them in its params.
 * Written by hand: in an object literal "__proto__" sets the prototype, so JSON.stringify would drop it.
 */
const lookupCall = (id: number, args: string, envelope: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"lookup_order","arguments":${args}${envelope}}}`;
const PROTOTYPE_REFUSAL = {
  code: -32602,
  message:
    'Invalid params: "__proto__" is not accepted as a field name anywhere in a message. Rename or remove the field.',
};

describe("an MCP request's body, read once", () => {
  it("serves a current-revision request whether its body is framed or streamed", async () => {
    const run = await openRun();
    for (const send of [framed, streamed]) {
      const response = await workerFetch(
        MCP_URL,
        send({ ...bearer(run.token), ...currentHeaders }, currentList),
      );
      expect(response.status).toBe(200);
      const answer = (await response.json()) as { id: number; result: { tools: unknown[] } };
      expect(answer.id).toBe(3);
      expect(answer.result.tools.length).toBeGreaterThan(0);
    }
  });

  it("answers a run token's empty or unparseable body with the transport's parse error (400, -32700)", async () => {
    const run = await openRun();
    for (const send of [framed, streamed]) {
      for (const text of ["", "{not json"]) {
        const response = await workerFetch(MCP_URL, send(bearer(run.token), text));
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 }, id: null });
      }
    }
  });

  it("refuses a field named __proto__ in a call of either revision, as the REST door does, and runs nothing", async () => {
    const run = await openRun();
    for (const args of ['{"order_id":"A1001","__proto__":{"x":1}}', '{"__proto__":{"order_id":"A1001"}}']) {
      for (const [headers, envelope] of [
        [currentCallHeaders, `,${CURRENT_META}`],
        [{}, ""],
      ] as const) {
        const response = await workerFetch(
          MCP_URL,
          framed({ ...bearer(run.token), ...headers }, lookupCall(9, args, envelope)),
        );
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ jsonrpc: "2.0", id: 9, error: PROTOTYPE_REFUSAL });
      }
    }
    expect(await traceOf(run)).toEqual([]);
  });

  it("refuses a notification holding __proto__ with 400 on either revision: it has no answer to carry the error", async () => {
    const run = await openRun();
    // Written by hand, as lookupCall is.
    const notification = (method: string, envelope: string) =>
      `{"jsonrpc":"2.0","method":"${method}","params":{"__proto__":{"x":1}${envelope}}}`;
    for (const [headers, body] of [
      [
        { ...currentHeaders, "mcp-method": "notifications/cancelled" },
        notification("notifications/cancelled", `,${CURRENT_META}`),
      ],
      [{}, notification("notifications/initialized", "")],
    ] as const) {
      const response = await workerFetch(MCP_URL, framed({ ...bearer(run.token), ...headers }, body));
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ jsonrpc: "2.0", id: null, error: PROTOTYPE_REFUSAL });
    }
    expect(await traceOf(run)).toEqual([]);
  });

  it("refuses a current-revision body over the call limit, framed or streamed (413)", async () => {
    const run = await openRun();
    const oversized = currentList.replace('"id":3', `"pad":"${"x".repeat(MAX_CALL_BODY_BYTES)}","id":3`);
    for (const send of [framed, streamed]) {
      const response = await workerFetch(
        MCP_URL,
        send({ ...bearer(run.token), ...currentHeaders }, oversized),
      );
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({
        jsonrpc: "2.0",
        error: { code: -32000, message: expect.stringMatching(/too large/i) },
      });
    }
  });

  it("answers a session's plain tools/call exactly as the SDK answers one it serves itself", async () => {
    const opened = await rpc(bearer("acme-agent-key"), INITIALIZE);
    const session = opened.headers.get("mcp-session-id") ?? "";
    expect(session).toMatch(/^ms1\./);
    const headers = {
      ...bearer("acme-agent-key"),
      "mcp-session-id": session,
      "mcp-protocol-version": "2025-06-18",
    };
    const params = { name: "lookup_order", arguments: { order_id: "A1002" } };
    // Plain, and with an empty `_meta` (which the SDK's server serves): the same call, twice.
    const plain = await rpc(headers, { jsonrpc: "2.0", id: 5, method: "tools/call", params });
    const served = await rpc(headers, {
      jsonrpc: "2.0",
      id: "six",
      method: "tools/call",
      params: { ...params, _meta: {} },
    });
    for (const answer of [plain, served]) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get("content-type")).toBe("application/json");
    }
    const shape = (json: Record<string, unknown> | null) => {
      const result = json?.result as {
        content: Array<Record<string, unknown>>;
        structuredContent: Record<string, unknown>;
      };
      return {
        keys: Object.keys(json ?? {}),
        result: Object.keys(result),
        content: result.content.map((item) => Object.keys(item)),
        envelope: Object.keys(result.structuredContent),
      };
    };
    expect(shape(plain.json)).toEqual(shape(served.json));
    expect(plain.json).toMatchObject({ jsonrpc: "2.0", id: 5, result: { isError: false } });
    expect(served.json).toMatchObject({ jsonrpc: "2.0", id: "six", result: { isError: false } });
    const text = (json: Record<string, unknown> | null) =>
      (json?.result as { content?: Array<{ text: string }> } | undefined)?.content?.[0]?.text ?? "";
    expect(text(plain.json)).toContain("lookup_order succeeded");
    expect(text(served.json)).toContain("lookup_order succeeded");
  });

  it("answers a plain call of an unknown session 404, as a served one", async () => {
    const headers = { ...bearer("acme-agent-key"), "mcp-session-id": "ms1.forged.session" };
    const params = { name: "lookup_order", arguments: { order_id: "A1002" } };
    const plain = await rpc(headers, { jsonrpc: "2.0", id: 5, method: "tools/call", params });
    const served = await rpc(headers, {
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { ...params, _meta: {} },
    });
    expect(plain.status).toBe(404);
    expect(plain.json).toEqual(served.json);
  });
});

describe("an MCP request's Origin", () => {
  it("refuses a request from another origin with 403, running nothing, and serves its own origin and none", async () => {
    const run = await openRun();
    const lookup = lookupCall(4, '{"order_id":"A1001"}', `,${CURRENT_META}`);
    const headers = { ...bearer(run.token), ...currentCallHeaders };
    const call = (origin: Record<string, string>) =>
      workerFetch(MCP_URL, framed({ ...headers, ...origin }, lookup));
    for (const origin of ["https://rebound.example", "null", `${new URL(MCP_URL).origin}.evil.example`]) {
      const refused = await call({ origin });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    }
    expect(await traceOf(run)).toEqual([]);
    const allowed: Record<string, string>[] = [{ origin: new URL(MCP_URL).origin }, {}];
    for (const origin of allowed) {
      const served = await call(origin);
      expect(served.status).toBe(200);
      expect(await served.json()).toMatchObject({ id: 4, result: { isError: false } });
    }
    expect(await traceOf(run)).toHaveLength(2);
  });
});
