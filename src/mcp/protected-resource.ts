/** Where MCP clients find how to authenticate to `/mcp` (RFC 9728, path-suffixed form). */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";
export const MCP_PATH = "/mcp";

/**
 * RFC 9728 protected-resource metadata for `/mcp`. The authorization server is this worker's own
 * origin (src/oauth/: an MCP client names itself by a metadata document or registers, an operator
 * consents, the client gets tokens); an agent key or a run token (from `POST /v1/runs`) works as the
 * bearer too, handed out outside OAuth. How clients identify themselves and the `iss` parameter are
 * the authorization server's to state (RFC 8414 metadata): RFC 9728 has no field for either.
 */
export function protectedResourceMetadata(origin: string) {
  return {
    resource: `${origin}${MCP_PATH}`,
    authorization_servers: [origin],
    resource_name: "edge-tool-proxy MCP endpoint",
    bearer_methods_supported: ["header"],
    resource_documentation: `${origin}/docs`,
  };
}

/**
 * The `WWW-Authenticate` challenge the MCP authorization spec expects on a 401: where the resource
 * metadata is, and for a credential that was presented, why it was refused.
 */
export function challenge(origin: string, error?: { code: string; description: string }): string {
  const metadata = `resource_metadata="${origin}${PROTECTED_RESOURCE_PATH}${MCP_PATH}"`;
  if (!error) return `Bearer ${metadata}`;
  return `Bearer error="${error.code}", error_description="${error.description}", ${metadata}`;
}
