import * as z from "zod";
import type { ProxyConfig } from "../config/load";
import { operatorFingerprint } from "./operator-id";
import { base64UrlEncode, signToken, verifyToken } from "./signed-token";

/**
 * Console sessions are signed tokens in a cookie, not rows in a store: the Worker keeps no session
 * state, and a session proves itself on every request. The signing keys are derived from
 * RUN_TOKEN_KEYS (see `consoleKeys`), so they rotate with them and share their overlap window.
 */

/** Distinct prefixes: a run token, a sign-in form's token (`csi1`) and a session never pass for one another. */
const SESSION_PREFIX = "cs1";

const ConsoleSessionSchema = z.strictObject({
  tenant: z.string().min(1),
  operator: z.string().regex(/^operator:[0-9a-f]{12}$/),
  /** Every form of this session carries it; a POST without it is refused. */
  csrf: z.string().min(32),
  exp: z.number(),
});
export type ConsoleSession = z.infer<typeof ConsoleSessionSchema>;

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

/** Signs exactly the given claims; sign-in issues sessions through it, and tests forge expiry with it. */
export async function signSession(session: ConsoleSession, runTokenKeys: readonly string[]): Promise<string> {
  return signToken(SESSION_PREFIX, session, await consoleKeys(runTokenKeys));
}

/**
 * The session a cookie value proves, or null when it is forged, malformed or expired, or when the
 * operator key it was opened with is no longer configured for its tenant. The session holds only the
 * key's fingerprint, a prefix of its stored hash, so removing a key from OPERATOR_KEYS ends every
 * console session opened with it at the next request, without a session store.
 */
export async function verifySession(
  token: string,
  config: ProxyConfig,
  now: number = Date.now(),
): Promise<ConsoleSession | null> {
  const verified = await verifyToken(
    SESSION_PREFIX,
    token,
    await consoleKeys(config.runTokenKeys),
    (value) => {
      const parsed = ConsoleSessionSchema.safeParse(value);
      return parsed.success ? parsed.data : null;
    },
    now,
  );
  if (!verified.ok) return null;
  const fingerprint = operatorFingerprint(verified.payload.operator);
  const configured = (config.operatorKeyHashes.get(verified.payload.tenant) ?? []).some(
    (hash) => fingerprint !== null && hash.startsWith(fingerprint),
  );
  return configured ? verified.payload : null;
}
