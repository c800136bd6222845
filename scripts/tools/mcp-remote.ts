// One connection to a remote MCP server, to list its tools: the command line's only use of the
// client SDK. The protocol revision is negotiated (`auto`: 2026-07-28 when offered, else the 2025
// handshake), as the proxy itself does for a `protocol: auto` upstream.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { PinnedDefinition } from "../../src/catalog/pin";

/** A refusal the command line prints as it is: a bad URL or header, a server out of reach. */
export class RemoteError extends Error {}

/** A listed tool: what a pin covers, plus what the importer reads to draft it. */
export interface ListedTool extends PinnedDefinition {
  title?: string;
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean } & Record<
    string,
    unknown
  >;
  execution?: { taskSupport?: string };
}

/** `--header "Name: value"` arguments as headers. */
export function parseHeaders(values: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const colon = value.indexOf(":");
    const name = value.slice(0, colon).trim();
    if (colon < 1 || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
      throw new RemoteError(`--header ${JSON.stringify(value)}: write it as "Name: value"`);
    }
    headers[name] = value.slice(colon + 1).trim();
  }
  return headers;
}

/** Every tool the server lists (all pages), in its order. */
export async function listRemoteTools(url: string, headers: Record<string, string>): Promise<ListedTool[]> {
  let endpoint: URL;
  try {
    endpoint = new URL(url);
  } catch {
    throw new RemoteError(`${url}: not a URL; give the MCP endpoint, such as http://127.0.0.1:8788/mcp`);
  }
  if (endpoint.protocol !== "http:" && endpoint.protocol !== "https:") {
    throw new RemoteError(`${url}: an MCP server is reached over http or https`);
  }
  const client = new Client(
    { name: "edge-tool-proxy-tools", version: "1.0.0" },
    { versionNegotiation: { mode: "auto", probe: { timeoutMs: 10_000 } } },
  );
  const transport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    return tools as ListedTool[];
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RemoteError(`${url}: could not list the server's tools: ${reason}`);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Pulls `--url` and every `--header` out of the arguments; the rest is the command's own. */
export function connectionOptions(args: readonly string[]): {
  url: string | null;
  headers: string[];
  rest: string[];
} {
  let url: string | null = null;
  const headers: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "--url") url = args[++i] ?? null;
    else if (arg === "--header") headers.push(args[++i] ?? "");
    else rest.push(arg);
  }
  return { url, headers, rest };
}
