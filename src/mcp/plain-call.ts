import { isJsonContentType, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { readCallBody } from "../door/call-body";
import type { CallRequest } from "../machine/prepare";
import type { Envelope } from "../wire/envelope";
import { toCallToolResult } from "./call-result";
import { sessionNotFound } from "./json-rpc";

/** A session's `tools/call` that every check of the SDK's transport and server would let through. */
interface PlainCall {
  id: string | number;
  tool: string;
  args: Record<string, unknown>;
}

const CALL_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAMS_KEYS = new Set(["name", "arguments"]);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The request, when it is a session's `tools/call` in its plainest form: the transport's headers
 * as its checks want them (Accept naming both JSON and event streams, a JSON Content-Type, an
 * `MCP-Protocol-Version` it supports or none, as `WebStandardStreamableHTTPServerTransport`'s
 * `handlePostRequest` and `validateProtocolVersion` check them in @modelcontextprotocol/server
 * 2.4), and a body of exactly `jsonrpc: "2.0"`, a string or integer id, `method`, and `params`
 * holding a string `name` and optionally an object `arguments`: nothing the SDK's JSON-RPC and
 * `tools/call` schemas would refuse, and no `_meta` (no progress token, trace context or
 * envelope). Anything else is null, and is served through the SDK as before.
 */
export function plainCall(request: Request, body: unknown): PlainCall | null {
  const accept = request.headers.get("accept");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return null;
  if (!isJsonContentType(request.headers.get("content-type"))) return null;
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return null;
  if (!isPlainObject(body) || Object.keys(body).some((key) => !CALL_KEYS.has(key))) return null;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== "2.0" || method !== "tools/call") return null;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return null;
  if (!isPlainObject(params) || Object.keys(params).some((key) => !PARAMS_KEYS.has(key))) return null;
  const { name, arguments: args } = params;
  if (typeof name !== "string" || !(args === undefined || isPlainObject(args))) return null;
  return { id: id as string | number, tool: name, args: args ?? {} };
}

/**
 * A plain session call, answered without building the SDK's server and transport for it: the
 * same call as `createRunServer`'s `tools/call` handler makes (`callTool`, the session's
 * `callInSession`), and the same answer the transport gives in JSON mode (200,
 * `{ result, jsonrpc, id }`; a failure the handler throws is the JSON-RPC error the SDK's protocol
 * layer makes of it). The result is `toCallToolResult`'s, whose shape the SDK's `CallToolResult`
 * schema accepts as it is, so its check is not repeated here. test/workerd/mcp-plain-call.test.ts
 * holds both paths to the same answers, with the SDK's own schemas.
 */
export async function answerPlainCall(
  call: PlainCall,
  callTool: (request: CallRequest) => Promise<Envelope | "over">,
): Promise<Response> {
  const headers = { "Content-Type": "application/json" };
  let answer: Envelope | "over";
  try {
    answer = await callTool(readCallBody({ tool: call.tool, args: call.args }));
  } catch (thrown) {
    const error = thrown as { code?: unknown; message?: string; data?: unknown };
    const code = Number.isSafeInteger(error.code) ? (error.code as number) : -32603;
    const data = error.data === undefined ? {} : { data: error.data };
    const message = error.message ?? "Internal error";
    return Response.json({ jsonrpc: "2.0", id: call.id, error: { code, message, ...data } }, { headers });
  }
  if (answer === "over") return sessionNotFound(call.id);
  return Response.json({ result: toCallToolResult(answer), jsonrpc: "2.0", id: call.id }, { headers });
}
