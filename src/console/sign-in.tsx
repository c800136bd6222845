/** @jsxImportSource hono/jsx */
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { authenticate } from "../auth/authenticate";
import { environmentOf } from "../config/environment";
import { loadConfig } from "../config/load";
import { INPUT_LIMITS } from "../core/input-limits";
import { countFailure, sourceWait } from "../ratelimit/auth-failures";
import type { ConsoleEnv } from "./console-env";
import { clearCookie, SESSION_COOKIE, SIGN_IN_COOKIE, setSessionCookie, setSignInCookie } from "./cookies";
import { csrfMatches } from "./csrf";
import { SIGN_IN_PATH } from "./guards";
import { safeReturnPath } from "./return-path";
import { issueSession, issueSignInToken, readSignInToken } from "./session";
import { SignInPage } from "./views/sign-in-page";

/** The sign-in form's CSRF token: the one in a still-valid cookie (other tabs keep working), else a new one. */
async function signInCsrf(c: Context<ConsoleEnv>): Promise<string> {
  const keys = loadConfig(c.env).runTokenKeys;
  const current = await readSignInToken(getCookie(c, SIGN_IN_COOKIE), keys);
  if (current) return current.csrf;
  const issued = await issueSignInToken(keys);
  setSignInCookie(c, issued.token);
  return issued.claims.csrf;
}

/**
 * The key as typed, without the spaces a paste brings along; no key at all when it is not text or is
 * longer than any bearer the proxy takes (a huge paste is not hashed).
 */
function typedKey(field: unknown): string | null {
  if (typeof field !== "string") return null;
  const key = field.trim();
  return key.length > INPUT_LIMITS.authorization_bytes ? null : key;
}

/**
 * The sign-in form. `return_to` (a console page, or the OAuth consent page that sent the browser
 * here) is carried through the form and followed after sign-in; anything else is dropped.
 */
export async function showSignIn(c: Context<ConsoleEnv>) {
  const config = loadConfig(c.env);
  const returnTo = safeReturnPath(c.req.query("return_to"));
  // A stale cookie is left alone here: signing in replaces it.
  const session = await authenticate(config, getCookie(c, SESSION_COOKIE), "console");
  if (session.ok) return c.redirect(returnTo ?? "/console", 303);
  return c.html(
    <SignInPage
      environment={environmentOf(c.env)}
      csrf={await signInCsrf(c)}
      signedOut={c.req.query("signed_out") === "1"}
      returnTo={returnTo}
    />,
  );
}

/**
 * Checks the operator key and opens a session. The form is CSRF-protected too (login CSRF: another
 * site must not sign a victim in to a session of its choosing); a stale form gets a fresh one, 403.
 */
export async function signIn(c: Context<ConsoleEnv>) {
  const config = loadConfig(c.env);
  const form = await c.req.parseBody();
  const returnTo = safeReturnPath(form.return_to);
  const pending = await readSignInToken(getCookie(c, SIGN_IN_COOKIE), config.runTokenKeys);
  if (!pending || !csrfMatches(pending.csrf, form.csrf)) {
    return c.html(
      <SignInPage
        environment={environmentOf(c.env)}
        csrf={await signInCsrf(c)}
        error="The sign-in form expired or was not sent by this console. Enter the key again."
        returnTo={returnTo}
      />,
      403,
    );
  }
  const key = typedKey(form.key);
  const origin = { source: c.req.header("cf-connecting-ip") ?? null, key };
  const waiting = sourceWait(origin);
  if (waiting !== null) return tooManyAttempts(c, pending.csrf, returnTo, waiting);
  const answer = await authenticate(config, key, "sign_in");
  if (!answer.ok) {
    const wait = await countFailure(c.env, origin);
    if (wait !== null) return tooManyAttempts(c, pending.csrf, returnTo, wait);
    return c.html(
      <SignInPage
        environment={environmentOf(c.env)}
        csrf={pending.csrf}
        error={answer.refusal.message}
        returnTo={returnTo}
      />,
      401,
    );
  }
  const { token } = await issueSession(answer.principal.operator, config.runTokenKeys);
  setSessionCookie(c, token);
  clearCookie(c, SIGN_IN_COOKIE);
  return c.redirect(returnTo ?? "/console", 303);
}

/**
 * Too many failed sign-ins from this address (or with keys like this one): the form again, 429,
 * saying when to try again, with `Retry-After`. The key was not checked when the address was over.
 */
function tooManyAttempts(c: Context<ConsoleEnv>, csrf: string, returnTo: string | null, waitMs: number) {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  c.header("Retry-After", String(seconds));
  return c.html(
    <SignInPage
      environment={environmentOf(c.env)}
      csrf={csrf}
      error={`Too many failed sign-ins from this address. Wait ${seconds} s, then enter the key again.`}
      returnTo={returnTo}
    />,
    429,
  );
}

/** A signed session cannot be revoked server-side before it expires; signing out deletes the cookie. */
export function signOut(c: Context<ConsoleEnv>) {
  clearCookie(c, SESSION_COOKIE);
  return c.redirect(`${SIGN_IN_PATH}?signed_out=1`, 303);
}
