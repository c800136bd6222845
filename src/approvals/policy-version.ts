import type { TenantConfig } from "../config/tenants";
import { canonicalJson } from "../core/canonical-json";
import { sha256Hex } from "../core/digest";

/** How many catalog versions' results are kept per tenant configuration (a deploy brings one more). */
const VERSIONS_KEPT = 8;

/**
 * Versions already computed, by tenant configuration object (parsed once per isolate and never
 * changed, `config/load.ts`) and catalog version: the same inputs always give the same version, so
 * a call need not canonicalise and hash the tenant's whole configuration again.
 */
const computed = new WeakMap<TenantConfig, Map<string, string>>();

/**
 * The version of the rules an approval is asked under: the catalog's content version and the
 * tenant's configuration. A human approves a call under these rules; if they change, the pending
 * approval no longer means what it meant, and it is invalidated rather than executed.
 */
export async function policyVersion(catalogVersion: string, tenant: TenantConfig): Promise<string> {
  let versions = computed.get(tenant);
  const known = versions?.get(catalogVersion);
  if (known !== undefined) return known;
  const version = `pol_${(await sha256Hex(canonicalJson([catalogVersion, tenant]))).slice(0, 16)}`;
  versions = computed.get(tenant) ?? new Map<string, string>();
  if (versions.size >= VERSIONS_KEPT) versions.clear();
  versions.set(catalogVersion, version);
  computed.set(tenant, versions);
  return version;
}
