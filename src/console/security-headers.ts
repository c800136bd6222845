import type { Context } from "hono";

/**
 * The headers of every console page. Styles are inline and the one script is the console's own file
 * (src/console/live-script.ts), so the policy allows scripts and fetches from this origin only: no
 * inline script, nothing from anywhere else. Forms may only post back here, and no other site may
 * frame a page with an approve button on it. Pages show live state and are never cached.
 *
 * `formTargets` adds origins a form's answer may redirect to: browsers hold the redirect after a
 * form post to `form-action` too, so the consent page names the OAuth client's redirect origin.
 */
export function setConsoleHeaders(c: Context, opts: { formTargets?: readonly string[] } = {}): void {
  const formAction = ["'self'", ...(opts.formTargets ?? [])].join(" ");
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  c.header("X-Frame-Options", "DENY");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "same-origin");
  c.header("Cache-Control", "no-store");
}
