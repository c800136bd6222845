/** The JSON-RPC answers `/mcp` writes itself, before or beside the SDK's: an error, to the request it answers. */

export type JsonRpcId = string | number | null;

/** The id of a single JSON-RPC request, so its error answers it; null for a batch or a notification. */
export function requestIdOf(body: unknown): JsonRpcId {
  if (typeof body !== "object" || body === null || Array.isArray(body) || !("id" in body)) return null;
  return typeof body.id === "string" || typeof body.id === "number" ? body.id : null;
}

export function rpcError(
  status: number,
  code: number,
  message: string,
  id: JsonRpcId,
  data?: unknown,
): Response {
  const error = data === undefined ? { code, message } : { code, message, data };
  return Response.json({ jsonrpc: "2.0", error, id }, { status });
}
