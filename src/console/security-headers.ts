import type { Context } from "hono";

/**
 * The headers of every console page. The pages load nothing from anywhere (styles are inline, there
 * is no script), so the policy forbids every fetch; forms may only post back here, and no other
 * site may frame a page with an approve button on it. Pages show live state and are never cached.
 *
 * `formTargets` adds origins a form's answer may redirect to: browsers hold the redirect after a
 * form post to `form-action` too, so the consent page names the OAuth client's redirect origin.
 */
export function setConsoleHeaders(c: Context, opts: { formTargets?: readonly string[] } = {}): void {
  const formAction = ["'self'", ...(opts.formTargets ?? [])].join(" ");
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  c.header("X-Frame-Options", "DENY");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "same-origin");
  c.header("Cache-Control", "no-store");
}
