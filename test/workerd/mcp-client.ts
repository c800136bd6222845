import { exports } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { type Envelope, envelopeSchema } from "../../src/wire/envelope";
import { assertNoSecrets } from "./helpers";

/**
 * An MCP client as the tests drive it: every request goes to the real worker in workerd, never to a
 * network, and no answer may carry a key or a run token.
 */

export const ORIGIN = "https://proxy.test";
export const MCP_URL = `${ORIGIN}/mcp`;

/** The fetch every MCP client of the tests uses, OAuth requests included. */
export async function workerFetch(url: string | URL, init?: RequestInit): Promise<Response> {
  const response = await exports.default.fetch(new Request(url, init));
  if (response.body && response.headers.get("content-type")?.includes("text/event-stream")) {
    return new Response(checkedStream(response.body), response);
  }
  assertNoSecrets(await response.clone().text());
  return response;
}

/**
 * An event stream, checked as it arrives: a listen stream stays open, so waiting for its end to
 * check it would never answer. Everything read so far is checked again with each chunk, so a key
 * split across two chunks is still found; a stream that carries one fails its reader.
 */
function checkedStream(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let seen = "";
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += decoder.decode(chunk, { stream: true });
        assertNoSecrets(seen);
        controller.enqueue(chunk);
      },
    }),
  );
}

/** A transport to /mcp whose every request carries `headers` (e.g. a static bearer). */
export function transportWith(headers: Record<string, string>): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(MCP_URL), {
    fetch: workerFetch,
    requestInit: { headers },
  });
}

/** Connects a client the way a host configured with a static bearer (a run token or an agent key) does. */
export async function connect(
  bearer: string,
  options: { headers?: Record<string, string>; client?: Client } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = options.client ?? new Client({ name: "mcp-test", version: "1.0.0" });
  const transport = transportWith({ authorization: `Bearer ${bearer}`, ...options.headers });
  await client.connect(transport);
  return { client, transport };
}

/** The envelope a tools/call result carries, checked against the envelope schema. */
export function envelopeOf(result: { structuredContent?: unknown }): Envelope {
  return envelopeSchema().parse(result.structuredContent);
}

/** The text block a tools/call result starts with, what a model reads first. */
export function textOf(result: { content?: unknown }): string {
  const [first] = (result.content ?? []) as Array<{ type: string; text?: string }>;
  return first?.type === "text" ? (first.text ?? "") : "";
}

/**
 * A raw JSON-RPC POST to /mcp, for what the SDK client would not send (or would retry on its own).
 * `body` is sent as is when a string, as JSON otherwise.
 */
export async function rpc(
  headers: Record<string, string>,
  body: unknown = { jsonrpc: "2.0", id: 1, method: "tools/list" },
): Promise<{ status: number; headers: Headers; text: string; json: Record<string, unknown> | null }> {
  const response = await workerFetch(MCP_URL, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: jsonOf(text) };
}

/** A JSON answer's object; null for anything else (an event stream, an empty body). */
function jsonOf(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The `initialize` request a client opens with. */
export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
} as const;

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
