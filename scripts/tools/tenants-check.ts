// The `TENANTS` table of every environment in wrangler.toml, checked by `npm run tools -- check`
// with the schema the Worker parses it with, each problem located where it is written
// (`wrangler.toml: env.sandbox.vars.TENANTS.globex.value_caps.USD.per_day: ...`), and each tool a
// tenant lets repeat its effect across runs (`repeat_effects`) checked against the catalog.
import { join } from "node:path";
import { unstable_readConfig as readConfig } from "wrangler";
import type { SideEffect } from "../../src/catalog/define-tool";
import { profileToolsProblems } from "../../src/catalog/profile-tools";
import { type TenantConfig, TenantsSchema } from "../../src/config/tenants";
import { formatPath } from "./located";

export const ENVIRONMENTS = ["sandbox", "production"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export interface DeployedTenant {
  environment: Environment;
  id: string;
  tenant: TenantConfig;
}

/** A tenant table's location in wrangler.toml. */
const tenantsAt = (environment: Environment) => `wrangler.toml: env.${environment}.vars.TENANTS`;

/**
 * One environment's tenants: each tenant parsed on its own, so one broken tenant is reported and
 * the others are still checked (and serve the catalog's checks).
 */
export function parseEnvironmentTenants(
  environment: Environment,
  raw: unknown,
): { tenants: DeployedTenant[]; problems: string[] } {
  const at = tenantsAt(environment);
  let table = raw;
  if (typeof raw === "string") {
    try {
      table = JSON.parse(raw);
    } catch (error) {
      return { tenants: [], problems: [`${at}: not JSON: ${(error as Error).message}`] };
    }
  }
  if (typeof table !== "object" || table === null || Array.isArray(table)) {
    return {
      tenants: [],
      problems: [`${at}: must be a table of tenants, such as [env.${environment}.vars.TENANTS.acme]`],
    };
  }
  const tenants: DeployedTenant[] = [];
  const problems: string[] = [];
  for (const [id, entry] of Object.entries(table)) {
    const parsed = TenantsSchema.safeParse({ [id]: entry });
    if (parsed.success) {
      const tenant = parsed.data[id];
      if (tenant) tenants.push({ environment, id, tenant });
    } else {
      for (const issue of parsed.error.issues) {
        problems.push(`${at}.${formatPath(issue.path)}: ${issue.message}`);
      }
    }
  }
  return { tenants, problems };
}

/** Every environment's tenants in `root`'s wrangler.toml, read with wrangler's own parser. */
export function readTenants(root: string): { tenants: DeployedTenant[]; problems: string[] } {
  const tenants: DeployedTenant[] = [];
  const problems: string[] = [];
  for (const environment of ENVIRONMENTS) {
    const config = readConfig(
      { config: join(root, "wrangler.toml"), env: environment },
      { hideWarnings: true },
    );
    const parsed = parseEnvironmentTenants(environment, config.vars.TENANTS);
    tenants.push(...parsed.tenants);
    problems.push(...parsed.problems);
  }
  return { tenants, problems };
}

/**
 * Each tool a tenant lets repeat its effect across runs must be a write or destructive tool of
 * one of its namespaces: a typo would otherwise leave the tool waiting for a human on every repeat.
 * `catalog` maps a namespace to its tools' side-effect classes (a tool whose class is unknown,
 * because its declaration is broken and reported elsewhere, passes).
 */
export function repeatEffectsProblems(
  tenants: readonly DeployedTenant[],
  catalog: ReadonlyMap<string, ReadonlyMap<string, SideEffect | undefined>>,
): string[] {
  const problems: string[] = [];
  for (const { environment, id, tenant } of tenants) {
    for (const [namespace, names] of Object.entries(tenant.repeat_effects)) {
      const at = `${tenantsAt(environment)}.${id}.repeat_effects.${namespace}`;
      const tools = catalog.get(namespace);
      if (!tenant.namespaces.includes(namespace)) {
        problems.push(
          `${at}: "${namespace}" is not one of the tenant's namespaces (${tenant.namespaces.join(", ")})`,
        );
        continue;
      }
      // A namespace of code tools is not declared in catalog/: its names are not checked here.
      if (!tools) continue;
      const writes = [...tools].filter(([, kind]) => kind === "write" || kind === "destructive");
      const offered =
        writes.length === 0 ? "it has none" : `it has ${writes.map(([name]) => name).join(", ")}`;
      names.forEach((name, index) => {
        const kind = tools.get(name);
        if (!tools.has(name)) {
          problems.push(
            `${at}[${index}]: "${name}" is not a tool of ${namespace}; name a write or destructive tool (${offered})`,
          );
        } else if (kind === "read" || kind === "draft") {
          problems.push(
            `${at}[${index}]: "${name}" is a ${kind} tool; only a write or destructive tool's effect can repeat (${offered})`,
          );
        }
      });
    }
  }
  return problems;
}

/**
 * Each agent profile's `tools` names tools its tenant grants, each once (src/catalog/profile-tools.ts,
 * the rule the proxy also applies when it starts). `catalog` maps a namespace to its tools.
 */
export function profileToolsOfDeployment(
  tenants: readonly DeployedTenant[],
  catalog: ReadonlyMap<string, ReadonlyMap<string, unknown>>,
): string[] {
  return tenants.flatMap(({ environment, id, tenant }) =>
    profileToolsProblems(`${tenantsAt(environment)}.${id}`, tenant, (namespace) => {
      const tools = catalog.get(namespace);
      return tools ? [...tools.keys(), "read_result_page"] : undefined;
    }),
  );
}
