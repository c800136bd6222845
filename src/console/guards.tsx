/** @jsxImportSource hono/jsx */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { every } from "hono/combine";
import { getCookie } from "hono/cookie";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { authenticate } from "../auth/authenticate";
import type { SignedInOperator } from "../auth/principal";
import { environmentOf } from "../config/environment";
import { loadConfig } from "../config/load";
import type { ConsoleEnv } from "./console-env";
import { clearCookie, SESSION_COOKIE } from "./cookies";
import { csrfMatches } from "./csrf";
import { MessagePage } from "./views/message-page";

/** A console form holds a token, a key or a 500-character reason: 16 KiB is generous. */
const FORM_BYTES = 16 * 1024;

export const SIGN_IN_PATH = "/console/sign-in";

/**
 * A page that only says something (a refusal, a missing page, a failure): a sentence, never a
 * stack, under the signed-in operator's header when there is one. `anonymous` leaves the operator
 * out, for answers given before or apart from the session (an unknown page, an error, a form too
 * large to read).
 */
export function messagePage(
  c: Context<ConsoleEnv>,
  status: ContentfulStatusCode,
  title: string,
  message: string,
  opts: { anonymous?: boolean; next?: { href: string; label: string } } = {},
) {
  return c.html(
    <MessagePage
      environment={environmentOf(c.env)}
      session={opts.anonymous ? null : (c.get("session") ?? null)}
      title={title}
      message={message}
      next={opts.next}
    />,
    status,
  );
}

/**
 * Pages and forms of a signed-in operator. No valid session (none, forged, expired, or its operator
 * key since removed) sends the browser to sign in; a stale cookie is cleared on the way.
 */
export const requireSession: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  const session = await currentSession(c);
  if (!session) return c.redirect(SIGN_IN_PATH, 303);
  c.set("session", session);
  await next();
};

/** The signed-in operator's session, or null (a stale cookie is cleared on the way). */
export async function currentSession(c: Context<ConsoleEnv>): Promise<SignedInOperator | null> {
  const cookie = getCookie(c, SESSION_COOKIE);
  const answer = await authenticate(loadConfig(c.env), cookie, "console");
  if (answer.ok) return answer.principal.session;
  if (cookie !== undefined) clearCookie(c, SESSION_COOKIE);
  return null;
}

export function forgedForm(c: Context<ConsoleEnv>) {
  return messagePage(
    c,
    403,
    "Form refused",
    "This form's security token is missing or does not match your session, so nothing was done. Reload the page and try again.",
  );
}

/**
 * Every POST of a session carries the session's CSRF token in a form field. SameSite=Strict already
 * keeps the cookie off cross-site requests; this holds even where a browser ignores SameSite.
 */
export const requireCsrf: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  const form = await c.req.parseBody();
  if (!csrfMatches(c.get("session").csrf, form.csrf)) return forgedForm(c);
  await next();
};

/** Refuses an oversized form before it is parsed. */
const limitFormSize: MiddlewareHandler<ConsoleEnv> = bodyLimit({
  maxSize: FORM_BYTES,
  onError: (c) =>
    messagePage(
      c,
      413,
      "Form too large",
      `A console form is at most ${FORM_BYTES / 1024} KiB; nothing was done.`,
      {
        anonymous: true,
      },
    ),
});

const FORM_TYPES = new Set(["application/x-www-form-urlencoded", "multipart/form-data"]);

/**
 * Refuses a body that is not a readable form: another content type, or a multipart type whose body
 * is not multipart. The form is parsed here once; the handlers' `parseBody` reads the parsed copy.
 */
const requireReadableForm: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  let readable = FORM_TYPES.has(type);
  if (readable) {
    try {
      await c.req.parseBody();
    } catch {
      readable = false;
    }
  }
  if (!readable) {
    return messagePage(
      c,
      400,
      "Form unreadable",
      "The form could not be read (it must be sent as a web form, application/x-www-form-urlencoded or multipart/form-data); nothing was done.",
      { anonymous: true },
    );
  }
  await next();
};

/** Every console form: at most 16 KiB, and a form the page can read, before anything acts on it. */
export const limitForm: MiddlewareHandler<ConsoleEnv> = every(limitFormSize, requireReadableForm);
