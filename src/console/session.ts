import * as z from "zod";
import { type ConsoleSession, consoleKeys, signSession } from "../auth/console-session";
import type { OperatorPrincipal } from "../auth/principal";
import { signToken, verifyToken } from "../auth/signed-token";
import { newCsrfToken } from "./csrf";

/**
 * What signing in hands out: a session (src/auth/console-session.ts verifies it on every request)
 * and, before that, the sign-in form's own token. Both are signed with keys derived from
 * RUN_TOKEN_KEYS, so they rotate with them.
 */

export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
/** The sign-in form's own CSRF token lives this long; an older form is simply shown again. */
export const SIGN_IN_TTL_MS = 60 * 60 * 1000;

/** Distinct from a session's prefix: a sign-in token never passes for a session. */
const SIGN_IN_PREFIX = "csi1";

/** Before sign-in there is no session, so the sign-in form's CSRF token travels in its own cookie. */
const SignInTokenSchema = z.strictObject({ csrf: z.string().min(32), exp: z.number() });
type SignInToken = z.infer<typeof SignInTokenSchema>;

/** A session for the operator a key identified: the key itself is never in it, only its fingerprint. */
export async function issueSession(
  operator: Pick<OperatorPrincipal, "tenant" | "operator">,
  runTokenKeys: readonly string[],
  now: number = Date.now(),
): Promise<{ token: string; session: ConsoleSession }> {
  const session: ConsoleSession = {
    tenant: operator.tenant,
    operator: operator.operator,
    csrf: newCsrfToken(),
    exp: now + SESSION_TTL_MS,
  };
  return { token: await signSession(session, runTokenKeys), session };
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
  const verified = await verifyToken(SIGN_IN_PREFIX, token, await consoleKeys(runTokenKeys), (value) => {
    const parsed = SignInTokenSchema.safeParse(value);
    return parsed.success ? parsed.data : null;
  });
  return verified.ok ? verified.payload : null;
}
