import type { TenantConfig } from "../config/tenants";
import { resolveSubset } from "./subset";

/**
 * Each agent profile's `tools` must name tools its tenant grants (the tools of its namespaces),
 * each once, no two of one name: checked where the catalog is known, when the proxy starts and by
 * `npm run tools -- check`. `toolsOf` names a namespace's tools. `at` prefixes each problem's
 * location, such as `TENANTS is invalid at "acme`.
 */
export function profileToolsProblems(
  at: string,
  tenant: Pick<TenantConfig, "namespaces" | "agent_profiles">,
  toolsOf: (namespace: string) => readonly string[] | undefined,
): string[] {
  const granted = tenant.namespaces.flatMap((namespace) =>
    (toolsOf(namespace) ?? []).map((name) => ({ namespace, name })),
  );
  const problems: string[] = [];
  for (const [profile, settings] of Object.entries(tenant.agent_profiles)) {
    if (settings.tools === undefined) continue;
    const resolved = resolveSubset(granted, settings.tools, `${at}.agent_profiles.${profile}.tools`);
    if (resolved.ok) continue;
    for (const problem of resolved.problems)
      problems.push(`${problem.field}: ${problem.reason}. ${problem.hint}`);
  }
  return problems;
}
