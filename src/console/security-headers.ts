import type { Context, MiddlewareHandler } from "hono";
import { applySecureHeaders, pageSecureHeaders, type SecureHeadersOptions } from "../http/secure-headers";
import type { ConsoleEnv } from "./console-env";

/**
 * The headers of every console page, by hono/secure-headers. Styles are inline and the one script
 * is the console's own file (src/console/live-script.ts), so the policy allows scripts and fetches
 * from this origin only: no inline script, nothing from anywhere else. Forms may only post back
 * here, and no other site may frame a page with an approve button on it.
 *
 * `formTargets` adds origins a form's answer may redirect to: browsers hold the redirect after a
 * form post to `form-action` too, so the consent page names the OAuth client's redirect origin.
 */
function consoleOptions(formTargets: readonly string[] = []): SecureHeadersOptions {
  return {
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      connectSrc: ["'self'"],
      styleSrc: ["'unsafe-inline'"],
      formAction: ["'self'", ...formTargets],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
    xFrameOptions: "DENY",
    referrerPolicy: "same-origin",
  };
}

const consoleHeaders = pageSecureHeaders(consoleOptions());

/** Pages show live state: never cached. (Not a header the library sets.) */
function noStore(c: Context): void {
  if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
}

/** The console's pages: its policy, and no caching unless a route says otherwise (its script). */
export const consoleSecurityHeaders: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  await consoleHeaders(c, next);
  noStore(c);
};

/**
 * The consent page's: the console's policy, with the OAuth client's redirect origin in
 * `form-action` once the handler has named it (`c.set("formTargets", ...)`).
 */
export const consentSecurityHeaders: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  await next();
  await applySecureHeaders(c, consoleOptions(c.get("formTargets")));
  noStore(c);
};
