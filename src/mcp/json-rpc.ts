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

/**
 * 404 is how Streamable HTTP says a session is gone: the client starts a new one with `initialize`.
 * Forged, another agent's, ended, past its deadline and idle sessions all look the same.
 */
export function sessionNotFound(id: JsonRpcId): Response {
  return rpcError(
    404,
    -32001,
    "Session not found: it ended, passed its deadline, sat idle too long or is not this agent's. Send initialize to open a new session.",
    id,
  );
}
