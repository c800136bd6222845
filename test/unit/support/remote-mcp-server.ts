import { createServer, type Server as HttpServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, Server, type Tool } from "@modelcontextprotocol/server";

/**
 * A remote MCP server on loopback for the command line's tests: it lists whatever `tools` holds
 * when asked (a test edits it to make the server drift), a few per page so a client must follow
 * the cursor, and speaks both protocol eras (the SDK's per-request handler with its stateless
 * 2025 fallback). It never runs a tool: the command line only lists.
 */
export interface RemoteMcpServer {
  url: string;
  tools: Tool[];
  /** The headers of every request received, so a test sees what the client sent. */
  received: IncomingHttpHeaders[];
  close(): Promise<void>;
}

const PAGE_SIZE = 3;

export async function startRemoteMcpServer(tools: Tool[]): Promise<RemoteMcpServer> {
  const state: RemoteMcpServer = { url: "", tools, received: [], close: async () => undefined };
  const handler = createMcpHandler(
    () => {
      const server = new Server({ name: "test-notes", version: "1.0.0" }, { capabilities: { tools: {} } });
      server.setRequestHandler("tools/list", (request) => {
        const start = Number(request.params?.cursor ?? 0);
        const end = start + PAGE_SIZE;
        return {
          tools: state.tools.slice(start, end),
          ...(end < state.tools.length ? { nextCursor: String(end) } : {}),
        };
      });
      return server;
    },
    { legacy: "stateless" },
  );
  const http: HttpServer = createServer(async (req, res) => {
    state.received.push(req.headers);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(name, value);
    }
    const answer = await handler.fetch(
      new Request(`http://127.0.0.1${req.url ?? "/"}`, {
        method: req.method,
        headers,
        ...(hasBody ? { body: Buffer.concat(chunks) } : {}),
      }),
    );
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  state.close = () => new Promise<void>((resolve) => http.close(() => resolve()));
  return state;
}
