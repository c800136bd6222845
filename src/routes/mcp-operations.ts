import { MCP_PATH, PROTECTED_RESOURCE_PATH } from "../mcp/protected-resource";
import { defineOperation, FAILURES, ref } from "../specs/operation";

/**
 * The MCP endpoint (src/mcp/routes.ts) as the API document describes it. Its messages are the MCP
 * specification's, not schemas of ours, so its handlers validate nothing these name; the paths are
 * the ones the handlers are registered at, and test/workerd/openapi.test.ts checks that every
 * route served is documented and every route documented is served.
 */
export const MCP_OPERATIONS = [
  defineOperation({
    method: "post",
    path: MCP_PATH,
    tag: "mcp",
    summary: "MCP Streamable HTTP endpoint",
    description:
      "JSON-RPC 2.0 over Streamable HTTP, JSON answers. With a run token: stateless, every request is a call in that run. With an agent key or an OAuth access token: `initialize` answers with an `Mcp-Session-Id` naming the session's run, which every later request of the session sends (with the same key or token); the run opens with the agent profile at the session's first `tools/call` (listing needs no run); an unknown, ended, idle or past-deadline session answers 404 so the client initializes again. `tools/list` lists the run's namespace; `tools/call` runs the same pipeline as POST /v1/runs/{run_id}/calls and returns the envelope as `structuredContent` (`isError: true` unless the outcome is success). Protocol errors are JSON-RPC errors.",
    credentials: ["runToken", "agentKey", "oauth"],
    notEnvelope: "MCP Streamable HTTP: JSON-RPC messages, as the MCP specification defines them.",
    protocolBody: {
      component: "JsonRpcMessage",
      description: "One JSON-RPC request or notification.",
      schema: {
        type: "object",
        required: ["jsonrpc"],
        properties: {
          jsonrpc: { const: "2.0" },
          id: { type: ["string", "integer"] },
          method: { type: "string" },
        },
        description: "A JSON-RPC 2.0 message as the MCP specification defines it.",
      },
    },
    responses: {
      "200": {
        description: "A JSON-RPC response.",
        content: { "application/json": { schema: ref("JsonRpcMessage") } },
      },
      "202": { description: "A notification was accepted." },
      "400": {
        description:
          "Not JSON or not JSON-RPC, or an agent's request other than `initialize` without a session: a JSON-RPC error.",
      },
      "404": {
        description: "The session is unknown, ended, idle or past its run's deadline: initialize again.",
      },
      "401": {
        ...FAILURES["401"],
        headers: {
          "WWW-Authenticate": {
            schema: { type: "string" },
            description: "Bearer with resource_metadata pointing at the protected-resource metadata.",
          },
        },
      },
    },
  }),
  defineOperation({
    method: "get",
    path: MCP_PATH,
    tag: "mcp",
    summary: "No server-initiated stream",
    description: "Calls end with one result each, so there is no server-initiated stream to open.",
    credentials: [],
    responses: { "405": { description: "Method not allowed: a JSON-RPC error." } },
  }),
  defineOperation({
    method: "delete",
    path: MCP_PATH,
    tag: "mcp",
    summary: "End an MCP session",
    description:
      "With an agent key or OAuth token and the session's `Mcp-Session-Id`: ends the session's run (a session that never made a tool call has none: 200, nothing ended). Without a session (a run token's stateless use) there is nothing to end.",
    credentials: ["agentKey", "oauth"],
    notEnvelope: "MCP Streamable HTTP: ending a session answers an empty body.",
    responses: {
      "200": { description: "The session's run is ended (empty body)." },
      "404": { description: "No such live session." },
      "405": { description: "No session to end: a JSON-RPC error." },
    },
  }),
  ...[PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`].map((path) =>
    defineOperation({
      method: "get",
      path,
      tag: "mcp",
      summary: "Protected-resource metadata (RFC 9728)",
      description:
        "Tells MCP clients how /mcp is authorized: a bearer run token or agent key in the Authorization header, or OAuth through the authorization server it names. Not an envelope: the RFC defines the shape.",
      credentials: [],
      notEnvelope: "RFC 9728 defines the metadata document.",
      responses: { "200": { description: "The metadata document.", content: { "application/json": {} } } },
    }),
  ),
];
