import type { Context } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { SESSION_TTL_MS, SIGN_IN_TTL_MS } from "./session";

/**
 * `__Host-` makes the browser insist on Secure, Path=/ and no Domain, so no sibling subdomain or
 * plain-HTTP page can plant or overwrite these cookies. HttpOnly keeps them from page scripts (the
 * console has none, but a future one cannot leak them), and SameSite=Strict keeps them off every
 * request another site starts, which is the first line against CSRF; the form tokens are the second.
 */
export const SESSION_COOKIE = "__Host-console";
export const SIGN_IN_COOKIE = "__Host-console-signin";

const BASE = { httpOnly: true, secure: true, sameSite: "Strict", path: "/" } as const;

export function setSessionCookie(c: Context, token: string): void {
  setCookie(c, SESSION_COOKIE, token, { ...BASE, maxAge: Math.floor(SESSION_TTL_MS / 1000) });
}

export function setSignInCookie(c: Context, token: string): void {
  setCookie(c, SIGN_IN_COOKIE, token, { ...BASE, maxAge: Math.floor(SIGN_IN_TTL_MS / 1000) });
}

export function clearCookie(c: Context, name: string): void {
  deleteCookie(c, name, BASE);
}
