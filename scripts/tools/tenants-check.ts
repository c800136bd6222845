// The `TENANTS` table of every environment in wrangler.toml, checked by `npm run tools -- check`
// with the schema the Worker parses it with, each problem located where it is written
// (`wrangler.toml: env.sandbox.vars.TENANTS.globex.value_caps.USD.per_day: ...`), and each tool a
// tenant lets repeat its effect across runs (`repeat_effects`) checked against the catalog.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { unstable_readConfig as readConfig } from "wrangler";
import { approverProblems } from "../../src/approvals/approver-check";
import { operatorsOf, parseOperatorKeys } from "../../src/auth/operator-keys";
import type { SideEffect, ToolSpec } from "../../src/catalog/define-tool";
import { profileToolsProblems } from "../../src/catalog/profile-tools";
import { type TenantConfig, tenantsSchema } from "../../src/config/tenants";
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
 * the others are still checked (and serve the catalog's checks). `table` is `TENANTS` decoded
 * (undefined when it is not JSON), for the compiled module.
 */
export function parseEnvironmentTenants(
  environment: Environment,
  raw: unknown,
): { tenants: DeployedTenant[]; table: unknown; problems: string[] } {
  const at = tenantsAt(environment);
  let table = raw;
  if (typeof raw === "string") {
    try {
      table = JSON.parse(raw);
    } catch (error) {
      return { tenants: [], table: undefined, problems: [`${at}: not JSON: ${(error as Error).message}`] };
    }
  }
  if (typeof table !== "object" || table === null || Array.isArray(table)) {
    return {
      tenants: [],
      table,
      problems: [`${at}: must be a table of tenants, such as [env.${environment}.vars.TENANTS.acme]`],
    };
  }
  const tenants: DeployedTenant[] = [];
  const problems: string[] = [];
  for (const [id, entry] of Object.entries(table)) {
    const parsed = tenantsSchema().safeParse({ [id]: entry });
    if (parsed.success) {
      const tenant = parsed.data[id];
      if (tenant) tenants.push({ environment, id, tenant });
    } else {
      for (const issue of parsed.error.issues) {
        problems.push(`${at}.${formatPath(issue.path)}: ${issue.message}`);
      }
    }
  }
  return { tenants, table, problems };
}

/**
 * Every environment's tenants in `root`'s wrangler.toml, read with wrangler's own parser, and each
 * environment's `TENANTS` decoded (what the Worker is given, for the compiled module).
 */
export function readTenants(root: string): {
  tenants: DeployedTenant[];
  tables: Record<Environment, unknown>;
  problems: string[];
} {
  const tenants: DeployedTenant[] = [];
  const problems: string[] = [];
  const tables: Record<Environment, unknown> = { sandbox: undefined, production: undefined };
  for (const environment of ENVIRONMENTS) {
    const config = readConfig(
      { config: join(root, "wrangler.toml"), env: environment },
      { hideWarnings: true },
    );
    const parsed = parseEnvironmentTenants(environment, config.vars.TENANTS);
    tables[environment] = parsed.table;
    tenants.push(...parsed.tenants);
    problems.push(...parsed.problems);
  }
  return { tenants, tables, problems };
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
 * Each tool a tenant limits (`tool_limits`) must be a tool of the namespace it is listed under, and
 * the argument a limit is `per` one of the tool's top-level arguments: a typo would otherwise limit
 * nothing, or put every call in one bucket. `catalog` maps a namespace to its tools' top-level
 * argument names (undefined when a broken declaration hides them; that is reported elsewhere). The
 * namespace itself is checked by the schema, as the Worker reads it.
 */
export function toolLimitsProblems(
  tenants: readonly DeployedTenant[],
  catalog: ReadonlyMap<string, ReadonlyMap<string, readonly string[] | undefined>>,
): string[] {
  const problems: string[] = [];
  for (const { environment, id, tenant } of tenants) {
    for (const [namespace, limits] of Object.entries(tenant.tool_limits)) {
      const tools = catalog.get(namespace);
      // A namespace of code tools is not declared in catalog/: its names are not checked here.
      if (!tools || !tenant.namespaces.includes(namespace)) continue;
      for (const [name, limit] of Object.entries(limits)) {
        const at = `${tenantsAt(environment)}.${id}.tool_limits.${namespace}.${name}`;
        if (!tools.has(name)) {
          problems.push(
            `${at}: "${name}" is not a tool of ${namespace} (it has ${[...tools.keys()].join(", ")})`,
          );
          continue;
        }
        const args = tools.get(name);
        if (limit.per !== undefined && args && !args.includes(limit.per)) {
          problems.push(
            `${at}.per: "${limit.per}" is not an argument of ${name} (it takes ${args.join(", ") || "none"})`,
          );
        }
      }
    }
  }
  return problems;
}

/**
 * Who approves, for the sandbox's tenants: every role a tool or a tenant's `approvers` names must be
 * held by an operator, and a two-person rule met by two people, in the OPERATOR_KEYS a local proxy
 * runs with (`.dev.vars`, else the committed `.dev.vars.example`). Production's keys are secrets
 * this check never sees: the Worker's start-up check applies the same rules to them.
 */
export function approversProblems(
  root: string,
  tenants: readonly DeployedTenant[],
  tools: readonly ToolSpec[],
): string[] {
  const file = [".dev.vars", ".dev.vars.example"].find((name) => existsSync(join(root, name)));
  if (!file) return [];
  const line = readFileSync(join(root, file), "utf8")
    .split("\n")
    .find((text) => text.startsWith("OPERATOR_KEYS="));
  if (!line) return [];
  let keys: ReturnType<typeof parseOperatorKeys>;
  try {
    keys = parseOperatorKeys(line.slice("OPERATOR_KEYS=".length));
  } catch (error) {
    return [`${file}: ${(error as Error).message}`];
  }
  return tenants
    .filter(({ environment }) => environment === "sandbox")
    .flatMap(({ environment, id, tenant }) =>
      approverProblems(tools, { id, config: tenant, at: tenantsAt(environment) }, operatorsOf(keys, id)).map(
        (problem) => (problem.startsWith("wrangler.toml") ? problem : `${file}: ${problem}`),
      ),
    );
}

/**
 * Each agent profile's `tools` names tools its tenant grants, each once (src/catalog/profile-tools.ts,
 * the rule the proxy also applies when it starts). `catalog` maps a namespace to its tools.
 */
export function profileToolsOfDeployment(
  tenants: readonly DeployedTenant[],
  catalog: ReadonlyMap<string, ReadonlyMap<string, unknown>>,
): string[] {
  return (
    tenants
      // A tenant with a namespace of code tools, not declared in the catalog checked, is not judged here:
      // what it grants is not known (the proxy's start-up check judges it with the whole catalog).
      .filter(({ tenant }) => tenant.namespaces.every((namespace) => catalog.has(namespace)))
      .flatMap(({ environment, id, tenant }) =>
        profileToolsProblems(`${tenantsAt(environment)}.${id}`, tenant, (namespace) => {
          const tools = catalog.get(namespace);
          return tools ? [...tools.keys(), "read_result_page"] : undefined;
        }),
      )
  );
}
