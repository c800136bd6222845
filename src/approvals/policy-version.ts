import type { TenantConfig } from "../config/tenants";
import { canonicalJson } from "../core/canonical-json";
import { sha256Hex } from "../core/digest";

/**
 * The version of the rules an approval is asked under: the catalog's content version and the
 * tenant's configuration. A human approves a call under these rules; if they change, the pending
 * approval no longer means what it meant, and it is invalidated rather than executed.
 */
export async function policyVersion(catalogVersion: string, tenant: TenantConfig): Promise<string> {
  return `pol_${(await sha256Hex(canonicalJson([catalogVersion, tenant]))).slice(0, 16)}`;
}
