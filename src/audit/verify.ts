import { compactVerify } from "jose/jws/compact/verify";
import { canonicalJson } from "../core/canonical-json";
import { type Receipt, ReceiptSchema } from "../wire/audit";
import { AUDIT_ALG, GENESIS, receiptHash } from "./chain";

/**
 * Offline verification of an export of a tenant's audit log (NDJSON: one receipt per line, in
 * canonical JSON, oldest first), with the published keys only: each line is a receipt as the log
 * wrote it (any byte changed shows), its hash is its body's, its signature is one of the keys', and
 * each receipt follows the one before it (the next `seq`, `prev` its hash). The first line that
 * breaks any of these is reported, by line number and by the receipt's place in the chain.
 */

export type Verdict =
  | {
      ok: true;
      receipts: number;
      /** The first and last `seq` of the export; null when it holds none. */
      first_seq: number | null;
      last_seq: number | null;
      tenant: string | null;
    }
  | {
      ok: false;
      /** The line of the export (from 1) where the chain first breaks. */
      line: number;
      /** Where in the chain it breaks: the receipt changed, or the one missing or moved; null when unknown. */
      seq: number | null;
      problem: string;
    };

export interface VerifyOptions {
  /**
   * A filtered export (by tool, run or operator) holds receipts of one chain with others between
   * them: each is still checked whole and signed, and in order, but a jump in `seq` is not a gap.
   */
  allowGaps?: boolean;
}

/** Verifies an export, line by line, and reports the first break. */
export async function verifyExport(
  text: string,
  keys: PublicKeyLookup,
  options: VerifyOptions = {},
): Promise<Verdict> {
  const lines = text.split("\n");
  // One final newline ends the last line; it is not an empty receipt.
  if (lines.at(-1) === "") lines.pop();
  const parsedLines = lines.map(parseLine);
  // Where each receipt is, to tell a receipt that moved from one that is gone.
  const lineOfSeq = new Map<number, number>();
  for (const [index, parsed] of parsedLines.entries()) {
    if (parsed.ok && !lineOfSeq.has(parsed.receipt.seq)) lineOfSeq.set(parsed.receipt.seq, index + 1);
  }
  let last: Receipt | null = null;
  let first: Receipt | null = null;
  for (const [index, parsed] of parsedLines.entries()) {
    const expected = last === null ? null : last.seq + 1;
    const broken = (problem: string, seq: number | null = expected): Verdict => ({
      ok: false,
      line: index + 1,
      seq,
      problem,
    });
    if (!parsed.ok) return broken(parsed.problem);
    const receipt = parsed.receipt;
    const { hash, sig, ...body } = receipt;
    if ((await receiptHash(body)) !== hash) {
      return broken(
        `receipt ${receipt.seq} was changed: its hash is not the hash of its content`,
        receipt.seq,
      );
    }
    if (!(await signatureHolds(sig, hash, keys))) {
      return broken(`receipt ${receipt.seq}'s signature does not verify with any published key`, receipt.seq);
    }
    if (last !== null) {
      if (receipt.tenant !== last.tenant) {
        return broken(`receipt ${receipt.seq} belongs to tenant ${receipt.tenant}, not ${last.tenant}`);
      }
      const gap = options.allowGaps === true && receipt.seq > last.seq + 1;
      if (receipt.seq !== last.seq + 1 && !gap) {
        const next = last.seq + 1;
        const moved = lineOfSeq.get(next);
        return broken(
          moved !== undefined && moved > index + 1
            ? `receipt ${receipt.seq} is out of order: receipt ${next} must come before it, and is on line ${moved}`
            : receipt.seq > next
              ? `receipt ${next} is missing: receipt ${receipt.seq} follows receipt ${last.seq}`
              : `receipt ${receipt.seq} is out of order: it follows receipt ${last.seq}`,
        );
      }
      if (!gap && receipt.prev !== last.hash) {
        return broken(
          `receipt ${receipt.seq} does not link to receipt ${last.seq}: its prev is not that receipt's hash`,
        );
      }
    } else if (receipt.seq === 1 && receipt.prev !== GENESIS) {
      return broken("receipt 1 does not start the chain: its prev is not the genesis hash", 1);
    }
    first ??= receipt;
    last = receipt;
  }
  return {
    ok: true,
    receipts: lines.length,
    first_seq: first?.seq ?? null,
    last_seq: last?.seq ?? null,
    tenant: first?.tenant ?? null,
  };
}

function parseLine(line: string): { ok: true; receipt: Receipt } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, problem: "the line is not JSON" };
  }
  const parsed = ReceiptSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "the line";
    return { ok: false, problem: `the line is not a receipt: ${where}: ${issue?.message ?? "invalid"}` };
  }
  // The log writes each receipt in canonical JSON: any other bytes meaning the same are an edit too.
  if (canonicalJson(value) !== line) {
    return { ok: false, problem: "the line is not the receipt as the log wrote it (not its canonical JSON)" };
  }
  return { ok: true, receipt: parsed.data };
}

/** Looks a public key up by the kid a signature's header names (jose's `createLocalJWKSet`). */
export type PublicKeyLookup = Parameters<typeof compactVerify>[1];

/**
 * Whether `sig` is a valid signature of `hash` by one of the published keys: its header names a key
 * of the set, the signature verifies, and its payload is that hash.
 */
export async function signatureHolds(sig: string, hash: string, keys: PublicKeyLookup): Promise<boolean> {
  try {
    const { payload, protectedHeader } = await compactVerify(sig, keys, { algorithms: [AUDIT_ALG] });
    return protectedHeader.alg === AUDIT_ALG && new TextDecoder().decode(payload) === hash;
  } catch {
    return false;
  }
}
