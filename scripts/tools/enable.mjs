// `npm run tools -- enable <namespace> --tenant <id> [--env sandbox|production]`
//
// Wires a declared namespace into the deployment, the two edits a newcomer would otherwise make by
// hand: the tenant's `namespaces` in wrangler.toml (each environment where the tenant exists, or the
// one named), and every secret the namespace's upstreams name in secrets.production.example.json,
// the template a production deploy fills. The edit is textual, so wrangler.toml keeps its comments
// and layout; what it wrote is read back through wrangler's own parser before the file is replaced.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { unstable_readConfig as readConfig } from "wrangler";
import YAML from "yaml";

const ENVIRONMENTS = ["sandbox", "production"];
const USAGE = "usage: npm run tools -- enable <namespace> --tenant <id> [--env sandbox|production]";

/** A refusal the command line prints as it is. */
export class EnableError extends Error {}

/**
 * Gives `tenant` the namespace declared in catalog/<namespace>.yaml and lists its upstreams'
 * secrets in the production template. Returns one sentence per change (none when all was done).
 *
 * @param {string} root the project folder
 * @param {string} namespace
 * @param {{ tenant: string, environments?: string[] }} options
 * @returns {string[]}
 */
export function enableNamespace(root, namespace, { tenant, environments }) {
  const declaration = readDeclaration(root, namespace);
  const tomlPath = join(root, "wrangler.toml");
  let toml = readFileSync(tomlPath, "utf8");
  const done = [];
  const found = [];
  for (const environment of environments ?? ENVIRONMENTS) {
    const edited = addNamespace(toml, environment, tenant, namespace);
    if (edited === null) continue;
    found.push(environment);
    if (edited !== toml) done.push(`wrangler.toml: tenant ${tenant} (${environment}) has ${namespace}`);
    toml = edited;
  }
  if (found.length === 0) {
    throw new EnableError(
      `wrangler.toml has no tenant ${tenant} in ${(environments ?? ENVIRONMENTS).join(" or ")}; add its [env.<environment>.vars.TENANTS.${tenant}] table first`,
    );
  }
  writeChecked(tomlPath, toml, found, tenant, namespace);

  const templatePath = join(root, "secrets.production.example.json");
  const template = JSON.parse(readFileSync(templatePath, "utf8"));
  for (const [name, upstream] of Object.entries(declaration.upstreams ?? {})) {
    const kind = upstream?.credential?.kind;
    const secret = kind === "static_header" || kind === "static_query" ? upstream.credential.secret : null;
    if (typeof secret !== "string" || secret in template) continue;
    template[secret] = `<the API key ${name} takes>`;
    done.push(`secrets.production.example.json: lists ${secret} (set its value in .dev.vars for npm start)`);
  }
  writeFileSync(templatePath, `${JSON.stringify(template, null, 2)}\n`);
  return done;
}

function readDeclaration(root, namespace) {
  const path = join(root, "catalog", `${namespace}.yaml`);
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    throw new EnableError(
      `catalog/${namespace}.yaml does not exist; import or write it first (npm run tools -- import openapi ...)`,
    );
  }
  const declaration = YAML.parse(text);
  if (declaration?.namespace !== namespace) {
    throw new EnableError(
      `catalog/${namespace}.yaml declares namespace ${declaration?.namespace}, not ${namespace}`,
    );
  }
  return declaration;
}

/**
 * wrangler.toml with `namespace` added to the tenant's `namespaces` array in one environment; the
 * text unchanged when it is already there; null when the environment has no such tenant.
 */
function addNamespace(toml, environment, tenant, namespace) {
  const lines = toml.split("\n");
  const header = `[env.${environment}.vars.TENANTS.${tenant}]`;
  const start = lines.findIndex((line) => line.trim() === header);
  if (start === -1) return null;
  for (let index = start + 1; index < lines.length && !lines[index].trim().startsWith("["); index++) {
    const match = /^(\s*namespaces\s*=\s*)(\[[^\]]*\])(.*)$/.exec(lines[index]);
    if (!match) continue;
    const namespaces = JSON.parse(match[2]);
    if (namespaces.includes(namespace)) return toml;
    lines[index] =
      `${match[1]}${JSON.stringify([...namespaces, namespace]).replaceAll(",", ", ")}${match[3]}`;
    return lines.join("\n");
  }
  throw new EnableError(`wrangler.toml: ${header} has no one-line namespaces = [...] to add to`);
}

/** Writes wrangler.toml only after wrangler reads the edit back as intended. */
function writeChecked(tomlPath, toml, environments, tenant, namespace) {
  const original = readFileSync(tomlPath, "utf8");
  writeFileSync(tomlPath, toml);
  try {
    for (const environment of environments) {
      const config = readConfig({ config: tomlPath, env: environment }, { hideWarnings: true });
      const namespaces = config.vars?.TENANTS?.[tenant]?.namespaces;
      if (!Array.isArray(namespaces) || !namespaces.includes(namespace)) {
        throw new EnableError(
          `wrangler.toml: the edit did not give ${tenant} ${namespace} in ${environment}`,
        );
      }
    }
  } catch (error) {
    writeFileSync(tomlPath, original);
    throw error;
  }
}

/** @param {string[]} args the arguments after `enable` */
function parseArgs(args) {
  const options = { namespace: null, tenant: null, environments: null };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--tenant") options.tenant = args[++i] ?? null;
    else if (arg === "--env") {
      const environment = args[++i];
      if (!ENVIRONMENTS.includes(environment))
        throw new EnableError(`--env ${environment}: sandbox or production\n${USAGE}`);
      options.environments = [environment];
    } else if (arg?.startsWith("--")) throw new EnableError(`unknown option ${arg}\n${USAGE}`);
    else if (options.namespace === null) options.namespace = arg;
    else throw new EnableError(`one namespace at a time (got ${options.namespace} and ${arg})\n${USAGE}`);
  }
  if (!options.namespace || !options.tenant) throw new EnableError(USAGE);
  return options;
}

/**
 * The command; returns the exit code.
 *
 * @param {string} root
 * @param {string[]} args
 * @returns {number}
 */
export function runEnable(root, args) {
  try {
    const { namespace, tenant, environments } = parseArgs(args);
    const done = enableNamespace(root, namespace, { tenant, environments: environments ?? undefined });
    for (const line of done) console.log(line);
    if (done.length === 0) console.log(`${tenant} already has ${namespace}; nothing to change`);
    return 0;
  } catch (error) {
    if (!(error instanceof EnableError)) throw error;
    console.error(error.message);
    return 1;
  }
}
