import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";

/** The library's options (its type is not exported by name). */
export type SecureHeadersOptions = NonNullable<Parameters<typeof secureHeaders>[0]>;

/**
 * What every page's own headers leave to the entry: HSTS, which only the entry knows to send on
 * https alone, and no Cross-Origin-Opener-Policy anywhere: an OAuth client that opens the consent
 * page in a popup reads the redirect back through `window.opener`, which that header would cut.
 */
const PAGE_DEFAULTS: SecureHeadersOptions = {
  strictTransportSecurity: false,
  crossOriginOpenerPolicy: false,
};

/**
 * A page's headers (hono/secure-headers): the library's defaults, `nosniff` among them, and the
 * page's own policy in `options` (its Content-Security-Policy, framing, referrer).
 */
export function pageSecureHeaders(options: SecureHeadersOptions): MiddlewareHandler {
  return secureHeaders({ ...PAGE_DEFAULTS, ...options });
}

/**
 * The same, for a policy the handler decides while it runs (the consent page names the OAuth
 * client's redirect origin in `form-action`): applied to the answer, once the handler has given it.
 */
export async function applySecureHeaders(
  c: Parameters<MiddlewareHandler>[0],
  options: SecureHeadersOptions,
): Promise<void> {
  await secureHeaders({ ...PAGE_DEFAULTS, ...options })(c, async () => {});
}

// The entry's layer. A header a route set itself (a page's stricter framing or referrer policy)
// is kept (`overwrite: false`); the rest are the library's defaults.
const entryHeaders = secureHeaders({ ...PAGE_DEFAULTS, strictTransportSecurity: true, overwrite: false });

/**
 * Every answer of the Worker, the API's, the docs', the console's and the OAuth provider's:
 * `X-Content-Type-Options: nosniff` and the library's other defaults, and Strict-Transport-Security
 * on a request that came over https only (over http a browser ignores it; local runs stay on http).
 */
export const secureResponseHeaders: MiddlewareHandler = async (c, next) => {
  await entryHeaders(c, next);
  if (!c.req.url.startsWith("https:")) c.res.headers.delete("Strict-Transport-Security");
};
