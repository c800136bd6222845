import type { OAuthProvider } from "@cloudflare/workers-oauth-provider";
import { findAgentKey } from "../auth/agent-keys";
import { bearerToken } from "../auth/keys";
import { environmentOf } from "../config/environment";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { MCP_PATH } from "../mcp/protected-resource";
import { type FetchHandler, OAUTH_PATHS } from "./paths";

const PROVIDER_PATHS = new Set<string>(Object.values(OAUTH_PATHS));

/** A worker answers on a handful of hostnames; more than this means junk Host headers, so start over. */
const MAX_ORIGINS = 16;

/**
 * The provider's access tokens are `userId:grantId:secret`. Run tokens (`rt1.…`) and agent keys
 * are the proxy's own credentials, which the provider would refuse, and a request without a bearer
 * gets the proxy's envelope and challenge: only a token of the provider's shape is its business.
 * An agent key is looked up only for a bearer of that shape, so the common case costs no hashing.
 */
async function carriesOAuthToken(request: Request, env: Env): Promise<boolean> {
  const token = bearerToken(request.headers.get("authorization"));
  if (!token || token.startsWith("rt1.")) return false;
  const parts = token.split(":");
  if (parts.length !== 3 || parts.some((part) => part === "")) return false;
  try {
    return (await findAgentKey(token, loadConfig(env))) === null;
  } catch {
    // A misconfigured proxy: the app refuses every request and says why.
    return false;
  }
}

function isMcpPath(pathname: string): boolean {
  return pathname === MCP_PATH || pathname.startsWith(`${MCP_PATH}/`);
}

/**
 * Wraps the proxy's fetch handler with the OAuth provider. The provider answers `/token`,
 * `/register` and the authorization-server metadata, passes `/authorize` on to the app (the consent
 * page), and checks OAuth tokens on `/mcp`, calling the app with the grant's `{ tenant, profile }`
 * as `ctx.props`. Everything else, and `/mcp` with a run token, an agent key or no credential,
 * reaches the app exactly as it arrived. The protected-resource metadata stays the app's
 * (src/mcp/routes.ts), which serves both its forms.
 */
export function withOAuth(app: FetchHandler<Env>): FetchHandler<Env> {
  const providers = new Map<string, OAuthProvider<Env> | null>();

  /**
   * Built once per isolate and origin; null where the provider refuses the origin (plain http off
   * loopback). The provider's library is imported here, on the first OAuth request: an isolate that
   * only serves tool calls never evaluates it.
   */
  async function providerFor(env: Env, origin: string): Promise<OAuthProvider<Env> | null> {
    const { OAuthProvider } = await import("@cloudflare/workers-oauth-provider");
    const { oauthOptions } = await import("./provider");
    const key = `${environmentOf(env)} ${origin}`;
    const known = providers.get(key);
    if (known !== undefined) return known;
    if (providers.size >= MAX_ORIGINS) providers.clear();
    let provider: OAuthProvider<Env> | null = null;
    try {
      provider = new OAuthProvider(oauthOptions(origin, environmentOf(env), { api: app, fallback: app }));
    } catch (error) {
      console.warn(`oauth: not offered on ${origin}: ${error instanceof Error ? error.message : error}`);
    }
    providers.set(key, provider);
    return provider;
  }

  return async (request, env, ctx) => {
    const url = new URL(request.url);
    const forProvider =
      PROVIDER_PATHS.has(url.pathname) ||
      (isMcpPath(url.pathname) && (await carriesOAuthToken(request, env)));
    const provider = forProvider ? await providerFor(env, url.origin) : null;
    if (!provider) return app(request, env, ctx);
    // Loaded with the provider: the library's fetches go through the egress guard (see there why).
    const { noteOwnHost, prefetchTokenClient, routeLibraryFetches } = await import("./library-fetch");
    routeLibraryFetches(env);
    noteOwnHost(url.hostname);
    if (request.method === "POST" && url.pathname === OAUTH_PATHS.register) {
      const { refuseRegistration } = await import("./registration-limits");
      const refused = await refuseRegistration(request, env);
      if (refused) return refused;
    }
    if (request.method === "POST" && url.pathname === OAUTH_PATHS.token) {
      const { refuseReusedRefreshToken } = await import("./refresh-reuse");
      const refused =
        (await prefetchTokenClient(request, env)) ?? (await refuseReusedRefreshToken(request, env));
      if (refused) return refused;
    }
    return provider.fetch(request, env, ctx);
  };
}
