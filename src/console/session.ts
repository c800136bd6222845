import * as z from "zod";
import { base64UrlEncode, signToken, verifyToken } from "../auth/signed-token";
import { newCsrfToken } from "./csrf";
import type { OperatorIdentity } from "./operator-key";

/**
 * Console sessions are signed tokens in a cookie, not rows in a store: the Worker keeps no session
 * state, and a session proves itself on every request. The signing keys are derived from
 * RUN_TOKEN_KEYS (see `consoleKeys`), so they rotate with them and share their overlap window.
 */

export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
/** The sign-in form's own CSRF token lives this long; an older form is simply shown again. */
export const SIGN_IN_TTL_MS = 60 * 60 * 1000;

/** Distinct prefixes: a run token, a sign-in token and a session never pass for one another. */
const SESSION_PREFIX = "cs1";
const SIGN_IN_PREFIX = "csi1";

export const ConsoleSessionSchema = z.strictObject({
  tenant: z.string().min(1),
  operator: z.string().regex(/^operator:[0-9a-f]{12}$/),
  /** Every form of this session carries it; a POST without it is refused. */
  csrf: z.string().min(32),
  exp: z.number(),
});
export type ConsoleSession = z.infer<typeof ConsoleSessionSchema>;

/** Before sign-in there is no session, so the sign-in form's CSRF token travels in its own cookie. */
export const SignInTokenSchema = z.strictObject({ csrf: z.string().min(32), exp: z.number() });
export type SignInToken = z.infer<typeof SignInTokenSchema>;

const DERIVATION_LABEL = new TextEncoder().encode("edge-tool-proxy/console-session/v1");
const derived = new Map<string, Promise<string>>();

/**
 * HMAC(run-token key, label) for each run-token key. A key used for two purposes would let a value
 * signed for one be replayed as the other if prefixes ever collided; a derived key rules that out,
 * and the order (first signs, all verify) carries over.
 */
export function consoleKeys(runTokenKeys: readonly string[]): Promise<string[]> {
  return Promise.all(
    runTokenKeys.map((secret) => {
      let key = derived.get(secret);
      if (!key) {
        key = (async () => {
          const hmac = await crypto.subtle.importKey(
            "raw",
            new TextEncoder().encode(secret),
            { name: "HMAC", hash: "SHA-256" },
            false,
            ["sign"],
          );
          return base64UrlEncode(new Uint8Array(await crypto.subtle.sign("HMAC", hmac, DERIVATION_LABEL)));
        })();
        derived.set(secret, key);
      }
      return key;
    }),
  );
}

function parseWith<T>(schema: z.ZodType<T>) {
  return (value: unknown): T | null => {
    const parsed = schema.safeParse(value);
    return parsed.success ? parsed.data : null;
  };
}

export async function issueSession(
  identity: OperatorIdentity,
  runTokenKeys: readonly string[],
  now: number = Date.now(),
): Promise<{ token: string; session: ConsoleSession }> {
  const session: ConsoleSession = { ...identity, csrf: newCsrfToken(), exp: now + SESSION_TTL_MS };
  return { token: await signSession(session, runTokenKeys), session };
}

/** Signs exactly the given claims; `issueSession` is the normal way in, this one lets tests forge expiry. */
export async function signSession(session: ConsoleSession, runTokenKeys: readonly string[]): Promise<string> {
  return signToken(SESSION_PREFIX, session, await consoleKeys(runTokenKeys));
}

/** The session a cookie value proves, or null when it is absent, forged, malformed or expired. */
export async function readSession(
  token: string | undefined,
  runTokenKeys: readonly string[],
): Promise<ConsoleSession | null> {
  if (!token) return null;
  const verified = await verifyToken(
    SESSION_PREFIX,
    token,
    await consoleKeys(runTokenKeys),
    parseWith(ConsoleSessionSchema),
  );
  return verified.ok ? verified.payload : null;
}

export async function issueSignInToken(
  runTokenKeys: readonly string[],
  now: number = Date.now(),
): Promise<{ token: string; claims: SignInToken }> {
  const claims: SignInToken = { csrf: newCsrfToken(), exp: now + SIGN_IN_TTL_MS };
  return { token: await signToken(SIGN_IN_PREFIX, claims, await consoleKeys(runTokenKeys)), claims };
}

export async function readSignInToken(
  token: string | undefined,
  runTokenKeys: readonly string[],
): Promise<SignInToken | null> {
  if (!token) return null;
  const verified = await verifyToken(
    SIGN_IN_PREFIX,
    token,
    await consoleKeys(runTokenKeys),
    parseWith(SignInTokenSchema),
  );
  return verified.ok ? verified.payload : null;
}
