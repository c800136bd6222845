/**
 * Compact HMAC-SHA256 tokens: `<prefix>.<base64url(payload)>.<base64url(mac)>`.
 *
 * Used for run tokens (agent → proxy), which only the proxy signs and verifies, so a shared secret
 * fits; upstream credentials are JWTs with asymmetric keys instead (src/upstream/credential.ts).
 * Signing always uses the first key; verification accepts any listed key, which is what makes
 * rotation with an overlap window possible.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export type TokenVerification<T> =
  | { ok: true; payload: T }
  | { ok: false; reason: "malformed" | "bad_signature" | "expired" };

/** Fields every signed token carries. `exp` is epoch milliseconds. */
export interface TokenClaims {
  exp: number;
}

export function base64UrlEncode(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * Decodes canonical base64url only: the text must be what `base64UrlEncode` makes of its bytes.
 * `atob` ignores the unused low bits of the last character, so without this check one MAC would
 * have several spellings and a token several valid forms.
 */
export function base64UrlDecode(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const padded = text.replaceAll("-", "+").replaceAll("_", "/") + "===".slice((text.length + 3) % 4);
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(padded), (char) => char.charCodeAt(0));
  } catch {
    return null;
  }
  return base64UrlEncode(bytes) === text ? bytes : null;
}

const keyCache = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
    keyCache.set(secret, key);
  }
  return key;
}

/**
 * Signs `payload` with the first of `secrets`.
 *
 * @example
 * const token = await signToken("rt", { run: "run_1", exp: Date.now() + 60_000 }, ["k1"]);
 */
export async function signToken<T extends TokenClaims>(
  prefix: string,
  payload: T,
  secrets: readonly string[],
): Promise<string> {
  const secret = secrets[0];
  if (!secret) throw new Error(`cannot sign a ${prefix} token: no signing key configured`);
  const body = base64UrlEncode(encoder.encode(JSON.stringify(payload)));
  const signed = `${prefix}.${body}`;
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(signed));
  return `${signed}.${base64UrlEncode(new Uint8Array(mac))}`;
}

/**
 * Verifies a token against every key in `secrets` (current and previous) and checks expiry.
 * The payload shape is checked by the caller's `parse`, so a token signed for another purpose
 * (another prefix) or with missing claims is `malformed`, not accepted.
 */
export async function verifyToken<T extends TokenClaims>(
  prefix: string,
  token: string,
  secrets: readonly string[],
  parse: (value: unknown) => T | null,
  now: number = Date.now(),
): Promise<TokenVerification<T>> {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== prefix) return { ok: false, reason: "malformed" };
  const [, body = "", macText = ""] = parts;
  const mac = base64UrlDecode(macText);
  const payloadBytes = base64UrlDecode(body);
  if (!mac || !payloadBytes) return { ok: false, reason: "malformed" };

  const signed = encoder.encode(`${prefix}.${body}`);
  let valid = false;
  for (const secret of secrets) {
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", await hmacKey(secret), mac, signed)) valid = true;
  }
  if (!valid) return { ok: false, reason: "bad_signature" };

  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(payloadBytes));
  } catch {
    return { ok: false, reason: "malformed" };
  }
  const payload = parse(raw);
  if (!payload) return { ok: false, reason: "malformed" };
  if (payload.exp <= now) return { ok: false, reason: "expired" };
  return { ok: true, payload };
}
