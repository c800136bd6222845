import {
  type AgentPrincipal,
  agentFromOAuthProps,
  findAgentKey,
  OAuthGrantPropsSchema,
} from "../auth/agent-keys";
import { bearerToken } from "../auth/keys";
import { type RunTokenClaims, verifyRunToken } from "../auth/run-token";
import type { ProxyConfig } from "../config/load";

/** Where MCP clients find how to authenticate to `/mcp` (RFC 9728, path-suffixed form). */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";
export const MCP_PATH = "/mcp";

/**
 * RFC 9728 protected-resource metadata for `/mcp`. The authorization server is this worker's own
 * origin (src/oauth/: an MCP client registers, an operator consents, the client gets tokens); an
 * agent key or a run token (from `POST /v1/runs`) works as the bearer too, handed out outside OAuth.
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
 * Who is calling `/mcp`: a run token (stateless, the token is the run) or an agent, by its agent
 * key or an OAuth grant for one of its tenant's agent profiles (a session is a run).
 */
export type McpCaller = { kind: "run"; claims: RunTokenClaims } | { kind: "agent"; agent: AgentPrincipal };

export type McpAuthentication =
  | { ok: true; caller: McpCaller }
  | { ok: false; message: string; challenge: string };

function challenge(origin: string, error?: { code: string; description: string }): string {
  const metadata = `resource_metadata="${origin}${PROTECTED_RESOURCE_PATH}${MCP_PATH}"`;
  if (!error) return `Bearer ${metadata}`;
  return `Bearer error="${error.code}", error_description="${error.description}", ${metadata}`;
}

const REFUSALS = {
  malformed:
    "The bearer is neither a run token nor an agent key. Use an agent key, or open a run with POST /v1/runs and use its run_token.",
  bad_signature: "The run token is not valid.",
  expired: "The run token has expired; open a new run.",
  stale_grant: "The OAuth grant names an agent profile that no longer exists; authorize again.",
} as const;

/**
 * Stage "authenticate" for `/mcp`. An OAuth access token arrives already verified by the OAuth
 * provider, as the grant's props on the execution context (`oauthProps`); otherwise the bearer is a
 * run token, whose `run` and `ns` claims decide the run and namespace every request reaches, or an
 * agent key. A refusal carries the `WWW-Authenticate` challenge the MCP authorization spec expects
 * on a 401.
 */
export async function authenticateMcp(
  authorization: string | undefined,
  config: ProxyConfig,
  origin: string,
  oauthProps?: unknown,
): Promise<McpAuthentication> {
  const refuse = (message: string): McpAuthentication => ({
    ok: false,
    message,
    challenge: challenge(origin, { code: "invalid_token", description: message }),
  });
  // Props of any other shape (a plain request's empty props) are no grant: the bearer decides.
  if (OAuthGrantPropsSchema.safeParse(oauthProps).success) {
    const agent = agentFromOAuthProps(config, oauthProps);
    return agent ? { ok: true, caller: { kind: "agent", agent } } : refuse(REFUSALS.stale_grant);
  }
  const token = bearerToken(authorization);
  if (!token) {
    return {
      ok: false,
      message:
        "/mcp needs a credential: Authorization: Bearer <agent key>, or <run token> from POST /v1/runs.",
      challenge: challenge(origin),
    };
  }
  const verified = await verifyRunToken(token, config.runTokenKeys);
  if (verified.ok) return { ok: true, caller: { kind: "run", claims: verified.payload } };
  if (verified.reason === "malformed") {
    // Not shaped like a run token at all: it may be an agent key (stored hashed, compared in constant time).
    const agent = await findAgentKey(token, config);
    if (agent) return { ok: true, caller: { kind: "agent", agent } };
  }
  return refuse(REFUSALS[verified.reason]);
}
