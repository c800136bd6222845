import {
  getOAuthApi,
  type OAuthHelpers,
  type OAuthProviderOptions,
} from "@cloudflare/workers-oauth-provider";
import { environmentOf } from "../config/environment";
import { newCallId } from "../core/ids";
import type { Env } from "../env";
import { MCP_PATH } from "../mcp/protected-resource";
import { type EnvironmentName, failure } from "../wire/envelope";
import { noteOwnHost, routeLibraryFetches } from "./library-fetch";
import { ACCESS_TOKEN_TTL_S, REFRESH_TOKEN_TTL_S } from "./lifetimes";
import { OAUTH_PATHS, type FetchHandler as PathsFetchHandler } from "./paths";

/**
 * OAuth 2.1 for MCP clients, by @cloudflare/workers-oauth-provider: it serves the token,
 * registration and metadata endpoints and checks OAuth access tokens on `/mcp`; the consent page
 * (`/authorize`, src/console/consent.tsx) and the console's grant list are ours.
 */

/** Dynamically registered clients that stop refreshing are forgotten after 30 days. */
const CLIENT_REGISTRATION_TTL_S = 30 * 24 * 60 * 60;

export type FetchHandler = PathsFetchHandler<Env>;

/**
 * The grant's owner as the provider stores it (`userId`). A grant belongs to the tenant, like an
 * agent key, not to the operator who consented (recorded in its metadata): so every operator of the
 * tenant lists and revokes all of the tenant's grants, one operator's key rotation orphans none,
 * and the tenant is part of the storage key, so a listing never reaches another tenant's grants.
 * Tenant names are `[a-z][a-z0-9_-]*`, so never contain the `:` that separates token parts.
 */
export function grantOwnerOf(tenant: string): string {
  return tenant;
}

/** What the console shows about a grant, stored beside it in clear (the props are encrypted). */
export interface GrantMetadata {
  tenant: string;
  profile: string;
  /** `operator:<key fingerprint>` of the operator who consented. */
  operator: string;
}

/** A 401 of the provider on `/mcp` (an unknown, expired or revoked token) as an envelope, challenge kept. */
function tokenRefusal(environment: EnvironmentName, status: number, headers: Record<string, string>) {
  const envelope = failure(
    { call_id: newCallId(), environment },
    {
      code: "permission_error",
      message:
        "The OAuth access token is not valid here: it is unknown, expired or revoked. Refresh it, or have an operator authorize the client again.",
      recommended_next_action: "escalate_to_human",
    },
  );
  return new Response(JSON.stringify(envelope), {
    status,
    headers: { ...headers, "content-type": "application/json" },
  });
}

/**
 * The provider's options for one origin. The protected resource is `<origin>/mcp` and the
 * authorization server is the origin itself: tokens are bound to the URL a client reached, so a
 * token issued on one hostname of the worker is refused on another.
 */
export function oauthOptions(
  origin: string,
  environment: EnvironmentName,
  handlers: { api: FetchHandler; fallback: FetchHandler },
): OAuthProviderOptions<Env> {
  return {
    apiRoute: MCP_PATH,
    apiHandler: { fetch: handlers.api },
    defaultHandler: { fetch: handlers.fallback },
    authorizeEndpoint: OAUTH_PATHS.authorize,
    tokenEndpoint: OAUTH_PATHS.token,
    clientRegistrationEndpoint: OAUTH_PATHS.register,
    accessTokenTTL: ACCESS_TOKEN_TTL_S,
    refreshTokenTTL: REFRESH_TOKEN_TTL_S,
    clientRegistrationTTL: CLIENT_REGISTRATION_TTL_S,
    // MCP 2026-07-28 clients name themselves by an https URL (a Client ID Metadata Document). The
    // library fetches it (5 KB and 10 s at most, cached as its Cache-Control says, at most 7 days),
    // checks that it names that URL as its client_id, and holds every authorization request to the
    // redirect_uris it lists; it needs the `global_fetch_strictly_public` flag (wrangler.toml), and
    // advertises `client_id_metadata_document_supported` only with it. Dynamic registration stays
    // for older clients. RFC 9207's `iss` needs nothing here: the library puts it in every
    // authorization response and says so in the metadata.
    clientIdMetadataDocumentEnabled: true,
    // No scopes: the agent profile the operator picks on the consent page decides what a token may do.
    resourceMetadata: {
      resource: `${origin}${MCP_PATH}`,
      authorization_servers: [origin],
      resource_name: "edge-tool-proxy MCP endpoint",
      bearer_methods_supported: ["header"],
    },
    onError: ({ status, headers, internal }) => {
      // Token-endpoint and registration errors keep OAuth's wire format, which clients parse; a
      // refusal on /mcp is an envelope like every other answer of the proxy.
      if (internal.category === "protected-resource" && status === 401) {
        return tokenRefusal(environment, status, headers);
      }
      console.warn(`oauth: ${status} ${internal.category}/${internal.reason}`);
    },
  };
}

const unused: FetchHandler = () => new Response(null, { status: 404 });

/**
 * The provider's helpers (consent, grants, clients) for the origin of a request, or null where
 * OAuth cannot be offered: the provider takes only https origins, and http on loopback hosts.
 */
export function oauthApi(env: Env, origin: string): OAuthHelpers | null {
  // The helpers look clients up, which may fetch their documents: through the guard only.
  routeLibraryFetches(env);
  noteOwnHost(new URL(origin).hostname);
  try {
    // The helpers never call a handler; the options only have to be complete.
    return getOAuthApi(oauthOptions(origin, environmentOf(env), { api: unused, fallback: unused }), env);
  } catch {
    return null;
  }
}
