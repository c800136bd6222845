import { sha256Hex } from "../core/digest";

const FINGERPRINT_HEX = 12;

/**
 * The id an operator key acts under, `operator:<first 12 hex of its SHA-256>`: what decisions and
 * traces record. The key itself is never stored or shown.
 */
export async function operatorIdOf(key: string): Promise<string> {
  return `operator:${(await sha256Hex(key)).slice(0, FINGERPRINT_HEX)}`;
}

/** The fingerprint part of an operator id, which prefixes the key's stored hash. */
export function operatorFingerprint(operatorId: string): string | null {
  const fingerprint = operatorId.slice("operator:".length);
  return operatorId.startsWith("operator:") && fingerprint.length === FINGERPRINT_HEX ? fingerprint : null;
}
