import type { ProxyConfig } from "../config/load";
import { resolveRunLimits } from "../config/tenants";
import type { RunLimits } from "../wire/run-status";

/** An agent profile as the consent page offers it: what a session of a client granted it may do. */
export interface ProfileChoice {
  name: string;
  namespace: string;
  /** The limits every run (MCP session) opened under the profile gets: its own, the rest defaults. */
  limits: RunLimits;
}

/** The tenant's agent profiles, by name, with the limits a run opened under each really gets. */
export function profileChoices(config: ProxyConfig, tenant: string): ProfileChoice[] {
  const settings = config.tenants[tenant];
  if (!settings) return [];
  return Object.entries(settings.agent_profiles)
    .map(([name, profile]) => {
      const limits = resolveRunLimits(profile.limits, settings.ceilings);
      // The configuration check keeps every profile under its tenant's ceilings; one that is not
      // could not open a run, so it is not offered.
      return limits.ok ? { name, namespace: profile.namespace, limits: limits.limits } : null;
    })
    .filter((choice): choice is ProfileChoice => choice !== null)
    .sort((a, b) => a.name.localeCompare(b.name));
}
