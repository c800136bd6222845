import type { JSONWebKeySet } from "jose";
import type { UserIdentity } from "../config/user-identity";
import { fetchDocument } from "../egress/remembered-fetch";
import type { Env } from "../env";

/**
 * An identity provider's public keys: the tenant's inline JWK Set, or the set at its `jwks_uri`
 * fetched through the egress guard (https, public hosts, every redirect checked, 64 KiB and five
 * seconds at most, throttled per target) and remembered for a minute. Null when they cannot be had,
 * or what was fetched is not a JWK Set: the assertion is then refused, never let through.
 */
export async function providerKeys(
  env: Env,
  users: UserIdentity,
  ownHost: string,
): Promise<JSONWebKeySet | null> {
  if (users.jwks) return users.jwks as unknown as JSONWebKeySet;
  if (!users.jwks_uri) return null;
  const answer = await fetchDocument(env, users.jwks_uri, { source: null, ownHosts: [ownHost] });
  if (!answer.ok) return null;
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(answer.document.body));
    return isKeySet(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function isKeySet(value: unknown): value is JSONWebKeySet {
  if (typeof value !== "object" || value === null) return false;
  const { keys } = value as { keys?: unknown };
  return Array.isArray(keys) && keys.every((key) => typeof key === "object" && key !== null && !("d" in key));
}
