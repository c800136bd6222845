import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { catalog } from "../tools";
import { type KeyPromiseText, keyPromiseText } from "./key-promise-text";

/** The names of the tools a tenant's runs can call, sorted: suggestions for the filter forms. */
export function tenantToolNames(env: Env, tenant: string): string[] {
  const namespaces = loadConfig(env).tenants[tenant]?.namespaces ?? [];
  const names = new Set(namespaces.flatMap((namespace) => catalog.tools(namespace).map((tool) => tool.name)));
  return [...names].sort();
}

/** One upstream a tenant's tools reach, as the health page lists it. */
export interface TenantUpstream extends KeyPromiseText {
  namespace: string;
}

/**
 * Each upstream a tenant's tools reach, once per namespace: whether it applies a key once, on what
 * evidence, and what a write of it in doubt gets (a write tool's, when it has one).
 */
export function tenantUpstreams(env: Env, tenant: string): TenantUpstream[] {
  const namespaces = loadConfig(env).tenants[tenant]?.namespaces ?? [];
  return namespaces.flatMap((namespace) => {
    // Per upstream, the first tool that writes through it, else its first read.
    const found = new Map<string, { row: TenantUpstream; writes: boolean }>();
    for (const tool of catalog.tools(namespace)) {
      const text = keyPromiseText(tool);
      if (!text) continue;
      const writes = tool.side_effect !== "read";
      const known = found.get(text.upstream);
      if (!known || (!known.writes && writes))
        found.set(text.upstream, { row: { namespace, ...text }, writes });
    }
    return [...found.values()].map(({ row }) => row).sort((a, b) => a.upstream.localeCompare(b.upstream));
  });
}
