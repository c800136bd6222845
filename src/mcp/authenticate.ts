import type { Context } from "hono";
import { authenticate } from "../auth/authenticate";
import { bearerToken } from "../auth/keys";
import type { PrincipalOf } from "../auth/principal";
import { loadConfig } from "../config/load";
import type { AppEnv } from "../http/app-env";
import { requestContext, respond } from "../http/respond";
import { failure } from "../wire/envelope";
import { challenge } from "./protected-resource";

/** The grant props the OAuth provider hands an authenticated request on its execution context. */
function oauthPropsOf(c: Context<AppEnv>): unknown {
  try {
    return c.executionCtx.props;
  } catch {
    // Hono throws when the app is called without an execution context: then there is no grant.
    return undefined;
  }
}

/**
 * A run token (stateless: the token is the run, whose `run` and `ns` claims decide what every request
 * reaches) or an agent, by its agent key or an OAuth grant for one of its tenant's agent profiles (a
 * session is a run). A refusal is a 401 with the challenge the MCP authorization spec expects: where
 * the resource metadata is, and why a presented credential was refused.
 */
export async function authenticated(c: Context<AppEnv>): Promise<PrincipalOf<"mcp"> | Response> {
  const answer = await authenticate(loadConfig(c.env), bearerToken(c.req.header("authorization")), "mcp", {
    oauthProps: oauthPropsOf(c),
  });
  if (answer.ok) return answer.principal;
  const { reason, message } = answer.refusal;
  const origin = new URL(c.req.url).origin;
  c.header(
    "WWW-Authenticate",
    reason === "missing"
      ? challenge(origin)
      : challenge(origin, { code: "invalid_token", description: message }),
  );
  return respond(c, failure(requestContext(c.env), { code: "permission_error", message }), {
    authFailure: answer.refusal.status === 401,
  });
}
