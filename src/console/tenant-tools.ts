import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { catalog } from "../tools";

/** The names of the tools a tenant's runs can call, sorted: suggestions for the filter forms. */
export function tenantToolNames(env: Env, tenant: string): string[] {
  const namespaces = loadConfig(env).tenants[tenant]?.namespaces ?? [];
  const names = new Set(namespaces.flatMap((namespace) => catalog.tools(namespace).map((tool) => tool.name)));
  return [...names].sort();
}
