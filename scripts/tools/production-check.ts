// `npm run tools -- check --env production`: what a production deploy must not ship, checked before
// it ships. The repository's own wrangler.toml and catalog carry placeholders for production by
// design (example.com URLs, the KV id to replace), so the plain `check` that `npm test` runs leaves
// them alone; a deployer runs this one (docs/deploying.md, "Deploying") and it fails until each is set.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { unstable_readConfig as readConfig } from "wrangler";
import { parse } from "yaml";
import {
  kvNamespaceIdProblem,
  metricsAccountProblem,
  placeholderUrlReason,
  placeholderUrlVars,
} from "../../src/config/placeholders";
import type { UpstreamStanding } from "./catalog-certifications";
import { type ProxyOrigins, proxyOriginsOf, unsafeBaseReason } from "./upstream-hosts";

const VARS_AT = "wrangler.toml: env.production.vars";
const VARS_SITE = "[env.production.vars] of wrangler.toml";

/** The production base URLs catalog/*.yaml declares, each with where it is written. */
function declaredProductionBases(root: string): { at: string; binding: string; url: string }[] {
  const folder = join(root, "catalog");
  let files: string[];
  try {
    files = readdirSync(folder).filter((name) => name.endsWith(".yaml"));
  } catch {
    return [];
  }
  return files.sort().flatMap((file) => {
    let document: unknown;
    try {
      document = parse(readFileSync(join(folder, file), "utf8"));
    } catch {
      return []; // reported by the catalog check
    }
    const upstreams = (document as { upstreams?: unknown } | null)?.upstreams;
    if (typeof upstreams !== "object" || upstreams === null) return [];
    return Object.entries(upstreams).flatMap(([binding, upstream]) => {
      const url = (upstream as { base?: { production?: unknown } } | null)?.base?.production;
      return typeof url === "string"
        ? [{ at: `catalog/${file}: upstreams.${binding}.base.production`, binding, url }]
        : [];
    });
  });
}

/**
 * Every placeholder production would ship from `root`: URL vars and METRICS_ACCOUNT_ID of
 * [env.production.vars], the ids of [[env.production.kv_namespaces]], and the production base URLs
 * the catalog declares. Each is a sentence located where it is written.
 */
export function productionDeploymentProblems(root: string): string[] {
  const config = readConfig(
    { config: join(root, "wrangler.toml"), env: "production" },
    { hideWarnings: true },
  );
  const sandbox = readConfig({ config: join(root, "wrangler.toml"), env: "sandbox" }, { hideWarnings: true });
  const own = proxyOriginsOf([config, sandbox]);
  const vars = config.vars as Record<string, unknown>;
  const problems: string[] = [];
  for (const [name, value] of Object.entries(vars)) {
    const placeholder = placeholderUrlVars({ [name]: value }, VARS_SITE);
    for (const problem of placeholder) problems.push(`${VARS_AT}.${name}: ${problem}`);
    const unsafe = placeholder.length === 0 ? unsafeUrlVar(name, value, own) : null;
    if (unsafe) problems.push(`${VARS_AT}.${name}: ${unsafe}`);
  }
  const account = metricsAccountProblem(vars.METRICS_ACCOUNT_ID, VARS_SITE);
  if (account) problems.push(`${VARS_AT}.METRICS_ACCOUNT_ID: ${account}`);
  for (const kv of config.kv_namespaces) {
    const problem = kvNamespaceIdProblem(
      kv.binding,
      kv.id,
      "production",
      "[[env.production.kv_namespaces]] of wrangler.toml",
    );
    if (problem) problems.push(`wrangler.toml: env.production.kv_namespaces.${kv.binding}.id: ${problem}`);
  }
  for (const { at, binding, url } of declaredProductionBases(root)) {
    const reason = placeholderUrlReason(url) ?? unsafeBaseReason(url, "production", own);
    if (reason) {
      problems.push(
        `${at}: upstream ${binding}'s production base URL is "${url}", ${reason}; set it to the https URL of the real server and run \`npm run tools -- compile\``,
      );
    }
  }
  return problems;
}

/** A production URL var on a host no public upstream has (a private network, a link, the proxy itself). */
function unsafeUrlVar(name: string, value: unknown, own: ProxyOrigins): string | null {
  if (typeof value !== "string" || !/^https?:\/\//i.test(value.trim())) return null;
  const reason = unsafeBaseReason(value.trim(), "production", own);
  return reason
    ? `${name} is "${value}", ${reason}; set ${name} in ${VARS_SITE} to the https URL of the real API`
    : null;
}

/** The command: prints each problem and says whether production may be deployed. */
export function runProductionCheck(root: string): boolean {
  const problems = productionDeploymentProblems(root);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(
      `\n${problems.length} production placeholder${problems.length === 1 ? "" : "s"}: do not deploy until each is set.`,
    );
    return false;
  }
  console.log("production: no placeholder URL, KV namespace id or account id");
  return true;
}

/**
 * What `check --env production` warns of without refusing: an upstream sent the proxy's JWT that no
 * certification has shown refusing a request without a valid one. It may verify; only a
 * certification (`npm run tools -- certify <ns>`) shows it does.
 */
export function unverifiedJwtWarnings(standings: readonly UpstreamStanding[]): string[] {
  return standings
    .filter((standing) => standing.unverified_jwt)
    .map(
      ({ namespace, upstream }) =>
        `warning: ${namespace}.${upstream} is sent the proxy's JWT, but no certification has shown it refusing a request without a valid one: run npm run tools -- certify ${namespace}`,
    );
}
