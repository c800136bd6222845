import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { catalog } from "../tools";
import type { MoneyField, ToolValues } from "./display-args";

/**
 * The money fields of the tools of these namespaces, by tool name. A name whose namespaces declare
 * different fields or currencies (or one declares none) is left out: its arguments are shown as they are rather than in
 * a currency that may be the wrong one.
 */
export function toolValuesOf(namespaces: readonly string[]): ToolValues {
  const values = new Map<string, MoneyField>();
  const ambiguous = new Set<string>();
  const seen = new Set<string>();
  for (const tool of namespaces.flatMap((namespace) => catalog.tools(namespace))) {
    const known = values.get(tool.name);
    const same = tool.value && known?.field === tool.value.field && known.currency === tool.value.currency;
    if (seen.has(tool.name) && !same) ambiguous.add(tool.name);
    seen.add(tool.name);
    if (tool.value) values.set(tool.name, { field: tool.value.field, currency: tool.value.currency });
  }
  for (const name of ambiguous) values.delete(name);
  return values;
}

/** The money fields of every tool a tenant's runs can call: for lists that span its namespaces. */
export function tenantToolValues(env: Env, tenant: string): ToolValues {
  return toolValuesOf(loadConfig(env).tenants[tenant]?.namespaces ?? []);
}
