import { describe, expect, it } from "vitest";
import { MAX_CALL_BODY_BYTES } from "../../src/wire/requests";
import { openRun } from "./helpers";
import { bearer, MCP_URL, workerFetch } from "./mcp-client";

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
});
