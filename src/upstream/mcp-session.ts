import { Client, type DiscoverResult, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { McpServer } from "../catalog/define-tool";

/**
 * Connections to remote MCP servers, one client per call over a connection state kept per isolate:
 * a 2026-07-28 server's discovery result (so a call needs no round trip before `tools/call`), or a
 * 2025 server's session id and revision (so a call skips `initialize`). A client per call keeps
 * each call's own credential, key header and fault on its own requests; the state is what is worth
 * sharing. A server that forgot the session (404) gets a fresh handshake, once.
 */

const CLIENT_INFO = { name: "edge-tool-proxy", version: "1" };

type Connection =
  | { era: "modern"; discover: DiscoverResult }
  | { era: "legacy"; sessionId: string | undefined; protocolVersion: string | undefined };

/** By server and tenant: a session belongs to the credential's subject. Bounded, like any per-isolate cache. */
const connections = new Map<string, Connection>();
const CONNECTIONS_MAX = 256;

/** The origin of every request the transport makes; the upstream rewrites it to the real base. */
const SERVICE_ORIGIN = "https://upstream.internal";

export interface Connected {
  client: Client;
  close: () => Promise<void>;
}

const keyOf = (server: McpServer, tenant: string) => `${server.name}\u0000${tenant}`;

/** Whether this isolate would resume a 2025 session with the server for the tenant. */
export function remembersSession(server: McpServer, tenant: string): boolean {
  const known = connections.get(keyOf(server, tenant));
  return known?.era === "legacy" && known.sessionId !== undefined;
}

/** Forgets what this isolate knows of a server for a tenant, so the next call starts with a handshake. */
export function forgetConnection(server: McpServer, tenant: string): void {
  connections.delete(keyOf(server, tenant));
}

/** Forgets every server's connection state, so each next call starts with a handshake. */
export function forgetConnections(): void {
  connections.clear();
}

/** A client for one call, connected with what this isolate remembers of the server. */
export async function connect(
  server: McpServer,
  tenant: string,
  fetch: (request: Request) => Promise<Response>,
  signal: AbortSignal,
): Promise<Connected> {
  const key = keyOf(server, tenant);
  const known = connections.get(key);
  const client = new Client(CLIENT_INFO, {
    versionNegotiation: {
      mode: server.protocol === "2026-07-28" ? { pin: "2026-07-28" } : server.protocol,
    },
  });
  const transport = new StreamableHTTPClientTransport(new URL(server.path, SERVICE_ORIGIN), {
    fetch: (url, init) => fetch(new Request(url, init)),
    ...(known?.era === "legacy" && known.sessionId
      ? { sessionId: known.sessionId, protocolVersion: known.protocolVersion }
      : {}),
  });
  if (known?.era === "modern") {
    await client.connect(transport, { prior: { kind: "modern", discover: known.discover }, signal });
  } else {
    await client.connect(transport, { signal });
  }
  if (!known) remember(key, client, transport);
  return {
    client,
    // A legacy session stays open for the next call: closing the client must not end it upstream.
    close: () => client.close(),
  };
}

function remember(key: string, client: Client, transport: StreamableHTTPClientTransport) {
  if (connections.size >= CONNECTIONS_MAX) connections.clear();
  const discover = client.getDiscoverResult();
  connections.set(
    key,
    client.getProtocolEra() === "modern" && discover
      ? { era: "modern", discover }
      : {
          era: "legacy",
          sessionId: transport.sessionId,
          protocolVersion: client.getNegotiatedProtocolVersion(),
        },
  );
}
