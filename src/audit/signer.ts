import { importJWK } from "jose/key/import";
import type { UpstreamSigningKey } from "../config/signing-keys";
import { AUDIT_ALG, type AuditSigner } from "./chain";

const imported = new Map<string, Promise<CryptoKey>>();

/**
 * The signer of receipts: the first of `AUDIT_SIGNING_KEYS` (the others are only published, so what
 * they signed before a rotation keeps verifying). Imported once per isolate and key, never
 * extractable once imported.
 */
export async function auditSignerOf(keys: readonly UpstreamSigningKey[]): Promise<AuditSigner> {
  const [first] = keys;
  if (!first) throw new Error("AUDIT_SIGNING_KEYS holds no key");
  const id = `${first.kid}.${first.x}`;
  let key = imported.get(id);
  if (!key) {
    const { kty, crv, x, d } = first;
    key = importJWK({ kty, crv, x, d }, AUDIT_ALG, { extractable: false }) as Promise<CryptoKey>;
    imported.set(id, key);
    // A failed import is not kept: the next receipt tries again.
    key.catch(() => imported.delete(id));
  }
  return { kid: first.kid, key: await key };
}
