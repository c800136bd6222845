import { findKeyOwner } from "../auth/keys";
import { operatorFingerprint, operatorIdOf } from "../auth/operator-id";
import type { ProxyConfig } from "../config/load";
import { INPUT_LIMITS } from "../pipeline/limit";

export interface OperatorIdentity {
  tenant: string;
  /** `operator:<first 12 hex of sha256(key)>`, exactly what the operator API records. */
  operator: string;
}

/**
 * The tenant and operator id of a presented operator key, or null. Only operator keys count: a
 * tenant key or a run token is not found in OPERATOR_KEYS and is refused like any wrong key, so
 * the sign-in form never tells a visitor that what they typed is some other valid credential.
 */
export async function identifyOperator(
  config: ProxyConfig,
  presented: string,
): Promise<OperatorIdentity | null> {
  const key = presented.trim();
  if (key.length === 0 || key.length > INPUT_LIMITS.authorization_bytes) return null;
  const tenant = await findKeyOwner(key, config.operatorKeyHashes);
  return tenant ? { tenant, operator: await operatorIdOf(key) } : null;
}

/**
 * Whether the key a session was opened with is still configured for its tenant. The session holds
 * only the key's fingerprint, a prefix of its stored hash, so removing a key from OPERATOR_KEYS
 * ends every console session opened with it at the next request, without a session store.
 */
export function operatorStillConfigured(config: ProxyConfig, identity: OperatorIdentity): boolean {
  const fingerprint = operatorFingerprint(identity.operator);
  if (!fingerprint) return false;
  return (config.operatorKeyHashes.get(identity.tenant) ?? []).some((hash) => hash.startsWith(fingerprint));
}
