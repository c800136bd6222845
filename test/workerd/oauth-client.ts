import {
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { assertNoSecrets } from "./helpers";
import { MCP_URL, ORIGIN, workerFetch } from "./mcp-client";

/** A desktop client's loopback callback; the test, not a browser, reads the redirect to it. */
export const REDIRECT_URI = "http://127.0.0.1:33418/callback";

/**
 * The small OAuthClientProvider an MCP host implements, keeping everything in memory. Named by its
 * client name (it registers dynamically) or, given `clientMetadataUrl`, by its Client ID Metadata
 * Document's URL (it does not register).
 */
export class MemoryOAuthClient implements OAuthClientProvider {
  client: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier = "";
  discovery: OAuthDiscoveryState | undefined;
  authorizationUrl: URL | undefined;
  readonly clientMetadataUrl: string | undefined;

  constructor(
    readonly name: string,
    options: { clientMetadataUrl?: string } = {},
  ) {
    this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT_URI],
      ...(this.clientMetadataUrl ? {} : { grant_types: ["authorization_code", "refresh_token"] }),
      ...(this.clientMetadataUrl ? {} : { response_types: ["code"] }),
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: StoredOAuthClientInformation) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

/** The SDK's Streamable HTTP transport to the worker's /mcp, authorizing with `oauth`. */
export function transportFor(oauth: OAuthClientProvider) {
  return new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: workerFetch, authProvider: oauth });
}

/** A JSON answer of one of the worker's OAuth endpoints, checked to leak no secret. */
export async function json(path: string, init: RequestInit = {}) {
  const response = await workerFetch(`${ORIGIN}${path}`, init);
  const text = await response.text();
  assertNoSecrets(text);
  return {
    status: response.status,
    headers: response.headers,
    body: JSON.parse(text) as Record<string, unknown>,
  };
}

function base64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** A PKCE verifier and its S256 challenge (RFC 7636). */
export async function pkcePair() {
  const verifier = base64Url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64Url(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
  );
  return { verifier, challenge };
}
