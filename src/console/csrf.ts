import { base64UrlEncode } from "../auth/signed-token";

const encoder = new TextEncoder();

/** 32 random bytes: one per session (and one per sign-in form), never derived from anything guessable. */
export function newCsrfToken(): string {
  return base64UrlEncode(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Whether a form's CSRF field is the session's token. Anything but a non-empty string of the same
 * length is refused before comparing, and the comparison itself takes constant time, so a forger
 * learns nothing from how fast a guess is turned down.
 */
export function csrfMatches(expected: string, presented: unknown): boolean {
  if (typeof presented !== "string" || presented.length === 0) return false;
  const a = encoder.encode(expected);
  const b = encoder.encode(presented);
  if (a.byteLength !== b.byteLength) return false;
  return crypto.subtle.timingSafeEqual(a, b);
}
