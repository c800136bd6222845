/** Where the sign-in form may send an operator afterwards: console pages and the OAuth consent page. */
const RETURN_PATHS = [/^\/console(\/|$)/, /^\/authorize$/];
/** An authorization request with a long state and PKCE challenge fits easily; anything longer is junk. */
const MAX_RETURN_CHARS = 4096;
const BASE = "https://return.invalid";

/**
 * The local path (with its query) a `return_to` value names, or null. Only paths of this worker
 * that a signed-in operator opens pass, so the sign-in form can never become an open redirect:
 * `//host`, `/\host`, absolute URLs and anything that resolves off this origin are refused.
 */
export function safeReturnPath(raw: unknown): string | null {
  if (typeof raw !== "string" || raw.length > MAX_RETURN_CHARS) return null;
  if (!raw.startsWith("/") || raw.startsWith("//") || raw.includes("\\")) return null;
  let url: URL;
  try {
    url = new URL(raw, BASE);
  } catch {
    return null;
  }
  if (url.origin !== BASE || !RETURN_PATHS.some((path) => path.test(url.pathname))) return null;
  return `${url.pathname}${url.search}`;
}

/** The sign-in page's address that comes back to `path` afterwards. */
export function signInPathReturningTo(path: string): string {
  return `/console/sign-in?return_to=${encodeURIComponent(path)}`;
}
