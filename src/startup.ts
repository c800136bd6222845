import { approverProblems } from "./approvals/approver-check";
import { operatorsOf } from "./auth/operator-keys";
import { type Catalog, CatalogError } from "./catalog/catalog";
import { profileToolsProblems } from "./catalog/profile-tools";
import { environmentOf } from "./config/environment";
import { loadConfig } from "./config/load";
import { productionPlaceholderProblems } from "./config/placeholders";
import { missingSecrets, missingSecretsProblem } from "./config/secrets";
import type { Env } from "./env";
import { catalog } from "./tools";
import { missingBindings, missingUpstreamSecrets } from "./upstream/bindings";

/** Why this proxy refuses traffic; both lists empty when it may serve. */
export interface StartupReport {
  /** Readable sentences, one per problem: a missing secret list, a malformed secret, a binding. */
  problems: string[];
  /** The required secrets that are not set, by name. */
  missing_secrets: string[];
}

const reports = new WeakMap<object, StartupReport>();

/** Why a tool catalog cannot load (the rule its first bad tool breaks), or null when it loads. */
export function catalogProblem(of: Catalog = catalog): string | null {
  try {
    of.all();
    return null;
  } catch (error) {
    if (error instanceof CatalogError) return `the tool catalog breaks a rule: ${error.message}`;
    throw error;
  }
}

/**
 * Checks secrets, configuration and every tool's binding once per environment object. A proxy
 * that lacks a secret, cannot reach one of its tools, or whose secrets are malformed refuses all
 * traffic and says why, and logs it once (Workers Logs, `wrangler tail`).
 */
export function startupCheck(env: Env): StartupReport {
  let report = reports.get(env);
  if (!report) {
    const problems: string[] = [];
    // The catalog loads here, on the first request: one that breaks a rule refuses all traffic.
    const catalogBroken = catalogProblem();
    if (catalogBroken !== null) {
      problems.push(catalogBroken);
      console.error(`edge-tool-proxy cannot start: ${catalogBroken}`);
      report = { problems, missing_secrets: missingSecrets(env) };
      reports.set(env, report);
      return report;
    }
    const missing = missingSecrets(env);
    if (missing.length > 0) {
      // Named together, with how to set them; parsing what is absent would only say "malformed".
      problems.push(missingSecretsProblem(missing, environmentOf(env)));
    } else {
      try {
        const config = loadConfig(env);
        for (const [id, tenant] of Object.entries(config.tenants)) {
          problems.push(
            ...approverProblems(
              catalog.all(),
              { id, config: tenant, at: "TENANTS" },
              operatorsOf(config.operatorKeys, id),
            ),
            // An agent profile's tools must be tools its tenant grants: a typo would open no run at all.
            ...profileToolsProblems(`TENANTS at "${id}`, tenant, (namespace) =>
              catalog.hasNamespace(namespace) ? catalog.tools(namespace).map((tool) => tool.name) : undefined,
            ).map((problem) => problem.replace(/^(TENANTS at "[^:]*):/, '$1":')),
          );
        }
      } catch (error) {
        problems.push(error instanceof Error ? error.message : String(error));
      }
    }
    problems.push(...missingBindings(catalog, env, environmentOf(env)));
    // A declared API key missing in production would send calls unauthenticated: refuse instead.
    if (environmentOf(env) === "production") {
      problems.push(...missingUpstreamSecrets(catalog, env));
      // An upstream URL left at the template's example.com (or pointing at this machine) would send
      // every call nowhere: refuse, naming each var, rather than fail call by call.
      const urlVars = catalog.all().flatMap((tool) => (tool.upstream ? [tool.upstream.binding] : []));
      problems.push(...productionPlaceholderProblems(env, urlVars));
    }
    for (const problem of problems) console.error(`edge-tool-proxy cannot start: ${problem}`);
    report = { problems, missing_secrets: missing };
    reports.set(env, report);
  }
  return report;
}
