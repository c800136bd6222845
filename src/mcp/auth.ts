import { bearerToken } from "../auth/keys";
import { type RunTokenClaims, verifyRunToken } from "../auth/run-token";

/** Where MCP clients find how to authenticate to `/mcp` (RFC 9728, path-suffixed form). */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";
export const MCP_PATH = "/mcp";

/**
 * RFC 9728 protected-resource metadata for `/mcp`. There is no OAuth authorization server to
 * name: the bearer is a run token, issued by `POST /v1/runs` to the orchestrator holding a tenant
 * key, so the document points people at the docs instead.
 */
export function protectedResourceMetadata(origin: string) {
  return {
    resource: `${origin}${MCP_PATH}`,
    resource_name: "edge-tool-proxy MCP endpoint",
    bearer_methods_supported: ["header"],
    resource_documentation: `${origin}/docs`,
  };
}

export type McpAuthentication =
  | { ok: true; claims: RunTokenClaims }
  | { ok: false; message: string; challenge: string };

function challenge(origin: string, error?: { code: string; description: string }): string {
  const metadata = `resource_metadata="${origin}${PROTECTED_RESOURCE_PATH}${MCP_PATH}"`;
  if (!error) return `Bearer ${metadata}`;
  return `Bearer error="${error.code}", error_description="${error.description}", ${metadata}`;
}

const REFUSALS = {
  malformed: "The bearer is not a run token. Open a run with POST /v1/runs and use its run_token.",
  bad_signature: "The run token is not valid.",
  expired: "The run token has expired; open a new run.",
} as const;

/**
 * Stage "authenticate" for `/mcp`: a run token, whose `run` and `ns` claims decide which run's
 * ledger and which namespace every request of this connection reaches. A refusal carries the
 * `WWW-Authenticate` challenge the MCP authorization spec expects on a 401.
 */
export async function authenticateMcp(
  authorization: string | undefined,
  runTokenKeys: readonly string[],
  origin: string,
): Promise<McpAuthentication> {
  const token = bearerToken(authorization);
  if (!token) {
    return {
      ok: false,
      message: "/mcp needs the run's token: Authorization: Bearer <run token> from POST /v1/runs.",
      challenge: challenge(origin),
    };
  }
  const verified = await verifyRunToken(token, runTokenKeys);
  if (!verified.ok) {
    const message = REFUSALS[verified.reason];
    return {
      ok: false,
      message,
      challenge: challenge(origin, { code: "invalid_token", description: message }),
    };
  }
  return { ok: true, claims: verified.payload };
}
