/**
 * The OAuth endpoints: the provider (src/oauth/provider.ts) serves token, registration and metadata;
 * the consent page at `/authorize` is the console's (src/console/consent.tsx). Kept apart from the provider
 * so routing them costs nothing until an OAuth request arrives.
 */
export const OAUTH_PATHS = {
  authorize: "/authorize",
  token: "/token",
  register: "/register",
  metadata: "/.well-known/oauth-authorization-server",
} as const;

/** A request's fetch handler, as the app and the provider both are. */
export type FetchHandler<E = unknown> = (
  request: Request,
  env: E,
  ctx: ExecutionContext,
) => Response | Promise<Response>;
