import { sha256Hex } from "../core/digest";

/** A JSON array of strings from a secret; a malformed secret is a deploy error, said plainly. */
export function parseKeyList(name: string, raw: string | undefined): string[] {
  try {
    const value: unknown = JSON.parse(raw ?? "");
    if (
      Array.isArray(value) &&
      value.length > 0 &&
      value.every((item) => typeof item === "string" && item.length >= 16)
    ) {
      return value;
    }
  } catch {
    // fall through to the error below
  }
  throw new Error(`${name} must be a JSON array of at least one key of 16+ characters`);
}

/** A JSON object `{ owner: [sha256 hex, ...] }` from a secret. */
export function parseKeyHashes(name: string, raw: string | undefined): Map<string, string[]> {
  try {
    const value: unknown = JSON.parse(raw ?? "");
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      const map = new Map<string, string[]>();
      for (const [owner, hashes] of Object.entries(value)) {
        if (
          !Array.isArray(hashes) ||
          !hashes.every((hash) => typeof hash === "string" && /^[0-9a-f]{64}$/.test(hash))
        ) {
          throw new Error("bad hashes");
        }
        map.set(owner, hashes);
      }
      return map;
    }
  } catch {
    // fall through to the error below
  }
  throw new Error(`${name} must be a JSON object mapping each tenant to a list of SHA-256 hex key hashes`);
}

function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let index = 0; index < bytes.length; index++)
    bytes[index] = Number.parseInt(hex.slice(index * 2, index * 2 + 2), 16);
  return bytes;
}

/**
 * Finds which owner a presented key belongs to. Keys are stored only as hashes; every stored hash
 * is compared, in constant time, so neither timing nor early exit tells how close a guess was.
 */
export async function findKeyOwner(
  presented: string,
  hashes: ReadonlyMap<string, readonly string[]>,
): Promise<string | null> {
  const digest = hexToBytes(await sha256Hex(presented));
  let owner: string | null = null;
  for (const [candidate, list] of hashes) {
    for (const hash of list) {
      if (crypto.subtle.timingSafeEqual(digest, hexToBytes(hash)) && owner === null) owner = candidate;
    }
  }
  return owner;
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}
