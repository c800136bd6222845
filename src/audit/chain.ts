import type { CryptoKey } from "jose";
import { CompactSign } from "jose/jws/compact/sign";
import { canonicalJson } from "../core/canonical-json";
import { sha256Hex } from "../core/digest";
import type { AuditEvent, Receipt } from "../wire/audit";

/**
 * A tenant's audit log is one hash chain: each receipt carries its place (`seq`, from 1, without
 * gaps), the hash of the receipt before it (`prev`), its own hash (SHA-256 of its canonical JSON
 * without `hash` and `sig`) and a signature of that hash: a compact JWS, EdDSA over Ed25519, whose
 * header names the key (`kid`). Changing a receipt breaks its hash, deleting or moving one breaks
 * the next one's `prev` and `seq`, and nobody without the private key can sign a replacement.
 */

/** The `prev` of a tenant's first receipt. */
export const GENESIS = "0".repeat(64);

/** The one algorithm receipts are signed with, as for upstream credentials. */
export const AUDIT_ALG = "EdDSA";

/** Where a receipt stands in its chain, and when the log appended it. */
export interface ChainPlace {
  tenant: string;
  seq: number;
  prev: string;
  recorded_at: string;
}

/** What a receipt's hash covers: everything but the hash and the signature. */
export type ReceiptBody = Omit<Receipt, "hash" | "sig">;

export function receiptBody(event: AuditEvent, place: ChainPlace): ReceiptBody {
  return { v: 1, ...place, ...event };
}

/** SHA-256 of the body's canonical JSON, in hex. */
export function receiptHash(body: ReceiptBody): Promise<string> {
  return sha256Hex(canonicalJson(body));
}

/** A private signing key, imported, and the kid its signatures name. */
export interface AuditSigner {
  kid: string;
  key: CryptoKey;
}

/** The body hashed and signed: the receipt as the log stores it. */
export async function sealReceipt(body: ReceiptBody, signer: AuditSigner): Promise<Receipt> {
  const hash = await receiptHash(body);
  const sig = await new CompactSign(new TextEncoder().encode(hash))
    .setProtectedHeader({ alg: AUDIT_ALG, kid: signer.kid, typ: "audit-receipt+jws" })
    .sign(signer.key);
  return { ...body, hash, sig };
}

/** The last receipt of a chain: what the next one follows. */
export interface ChainHead {
  seq: number;
  hash: string;
}

/** The receipt that follows `head` (null: the chain's first) for `event`, sealed. */
export function nextReceipt(
  head: ChainHead | null,
  tenant: string,
  event: AuditEvent,
  recordedAt: number,
  signer: AuditSigner,
): Promise<Receipt> {
  const place = {
    tenant,
    seq: (head?.seq ?? 0) + 1,
    prev: head?.hash ?? GENESIS,
    recorded_at: new Date(recordedAt).toISOString(),
  };
  return sealReceipt(receiptBody(event, place), signer);
}
