import type { JSONWebKeySet } from "jose";
import * as z from "zod";

/**
 * The keys behind upstream credentials. The proxy holds Ed25519 private keys (`UPSTREAM_SIGNING_KEYS`,
 * a JSON array of JWKs: the first signs, every one is published); an upstream holds only their
 * public halves, fetched from `GET /.well-known/jwks.json` or pinned. Asymmetric keys mean an
 * upstream can verify a credential but never mint one, so one leaky upstream cannot forge calls to
 * another.
 */

/** The one algorithm upstream credentials are signed with: EdDSA over Ed25519 (RFC 8037). */
export const UPSTREAM_CREDENTIAL_ALG = "EdDSA";

/** 32 bytes, base64url without padding: the size of an Ed25519 public key and of its seed. */
const Ed25519Bytes = z.string().regex(/^[A-Za-z0-9_-]{43}$/);
const Kid = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._-]+$/);

/** One private signing key as configured: an OKP JWK with its `kid`. Other members are dropped. */
export const UpstreamSigningKeySchema = z.object({
  kty: z.literal("OKP"),
  crv: z.literal("Ed25519"),
  alg: z.literal(UPSTREAM_CREDENTIAL_ALG).optional(),
  kid: Kid,
  x: Ed25519Bytes,
  d: Ed25519Bytes,
});
export type UpstreamSigningKey = z.infer<typeof UpstreamSigningKeySchema>;

/** One published key: the public members only, as `GET /.well-known/jwks.json` serves it. */
export const UpstreamPublicKeySchema = z.object({
  kty: z.literal("OKP"),
  crv: z.literal("Ed25519"),
  alg: z.literal(UPSTREAM_CREDENTIAL_ALG).optional(),
  use: z.literal("sig").optional(),
  kid: Kid,
  x: Ed25519Bytes,
});
export type UpstreamPublicKey = z.infer<typeof UpstreamPublicKeySchema>;

/** JWK members that carry private key material, for any key type (RFC 7518 §6). */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] as const;

function distinctKids(keys: ReadonlyArray<{ kid: string }>): boolean {
  return new Set(keys.map((key) => key.kid)).size === keys.length;
}

/**
 * `UPSTREAM_SIGNING_KEYS` from its secret. A malformed secret is a deploy error, said plainly, and
 * the message never repeats the value.
 *
 * @example
 * parseUpstreamSigningKeys("UPSTREAM_SIGNING_KEYS", '[{"kty":"OKP","crv":"Ed25519","kid":"2026-11","x":"…","d":"…"}]');
 */
export function parseUpstreamSigningKeys(name: string, raw: string | undefined): UpstreamSigningKey[] {
  let value: unknown;
  try {
    value = JSON.parse(raw ?? "");
  } catch {
    value = undefined;
  }
  const parsed = z.array(UpstreamSigningKeySchema).min(1).safeParse(value);
  if (!parsed.success || !distinctKids(parsed.data)) {
    throw new Error(
      `${name} must be a JSON array of at least one Ed25519 private JWK ({"kty":"OKP","crv":"Ed25519","kid","x","d"}) with distinct kids`,
    );
  }
  return parsed.data;
}

/**
 * The public JWK Set of the configured keys, every one of them: the first signs, the others are
 * published so credentials they signed before a rotation keep verifying. Built member by member,
 * so no private member can ever be copied into it.
 */
export function publicJwks(keys: readonly UpstreamSigningKey[]): { keys: UpstreamPublicKey[] } {
  return {
    keys: keys.map(({ kty, crv, kid, x }) => ({
      kty,
      crv,
      kid,
      x,
      alg: UPSTREAM_CREDENTIAL_ALG,
      use: "sig",
    })),
  };
}

/**
 * A pinned JWK Set from an upstream's configuration (the sandbox's `UPSTREAM_JWKS`), or null when
 * it is missing or malformed. A set carrying any private member is refused outright: an upstream
 * given the proxy's private key could mint credentials, which is exactly what it must not be able to do.
 */
export function parseUpstreamJwks(raw: string | undefined): JSONWebKeySet | null {
  let value: unknown;
  try {
    value = JSON.parse(raw ?? "");
  } catch {
    return null;
  }
  const members = (value as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(members)) return null;
  const hasPrivate = members.some(
    (key) => typeof key === "object" && key !== null && PRIVATE_MEMBERS.some((member) => member in key),
  );
  if (hasPrivate) return null;
  const parsed = z.array(UpstreamPublicKeySchema).min(1).safeParse(members);
  if (!parsed.success || !distinctKids(parsed.data)) return null;
  return { keys: parsed.data };
}
