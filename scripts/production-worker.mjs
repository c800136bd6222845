// The Worker a production deploy ships, as Miniflare options: the split build's modules (every
// module of the dry run's outdir, the main module first, as `find_additional_modules` uploads them),
// the vars, Durable Objects and KV of `[env.production]` in wrangler.toml, and the secrets
// secrets.production.example.json names (the template of docs/deploying.md), filled with the demo
// values of .dev.vars.example. Everything is read from the tree given, so an older checkout is served
// with its own configuration. scripts/test-production-bundle.mjs boots it; the bench times its cold start.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { unstable_readConfig as readConfig } from "wrangler";
import { root } from "./local-stack.mjs";

/** KEY=value lines of a .dev.vars file. */
export function readDevVars(path) {
  const vars = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match?.[1]) vars[match[1]] = match[2];
  }
  return vars;
}

/** wrangler.toml's `[env.production]` of the tree at `from`, as the pinned wrangler reads it. */
export function productionConfig(from = root) {
  return readConfig({ config: join(from, "wrangler.toml"), env: "production" }, { hideWarnings: true });
}

/** Miniflare's Durable Objects for a config: its bindings, SQLite-backed where its migrations say so. */
export function durableObjectsOf(workerConfig) {
  const sqlite = new Set(workerConfig.migrations.flatMap((migration) => migration.new_sqlite_classes ?? []));
  return Object.fromEntries(
    workerConfig.durable_objects.bindings.map((binding) => [
      binding.name,
      { className: binding.class_name, useSQLite: sqlite.has(binding.class_name) },
    ]),
  );
}

/** The tools' upstreams: the vars holding an https URL, as `[name, value]`. */
export function urlVarsOf(vars) {
  return Object.entries(vars).filter(([, value]) => typeof value === "string" && /^https:\/\//.test(value));
}

/**
 * `vars` with each upstream URL replaced by a stand-in under `domain`. wrangler.toml ships
 * placeholders there (https://orders.api.example.com, ...), which the Worker refuses to start with,
 * as it refuses loopback addresses; a deployer sets the real APIs' URLs. A private-use name
 * (.internal) passes that check and resolves nowhere.
 */
export function withStandInUpstreams(vars, domain) {
  return {
    ...vars,
    ...Object.fromEntries(
      urlVarsOf(vars).map(([name]) => [name, `https://${name.toLowerCase().replaceAll("_", "-")}.${domain}`]),
    ),
  };
}

/**
 * Only the secrets the template tells an operator to set, with the demo values of the tree's
 * .dev.vars.example. Throws when the template names a secret the demo values lack.
 */
export function productionSecrets(from = root) {
  const template = JSON.parse(readFileSync(join(from, "secrets.production.example.json"), "utf8"));
  const demo = readDevVars(join(from, ".dev.vars.example"));
  const secrets = {};
  for (const name of Object.keys(template)) {
    if (demo[name] === undefined)
      throw new Error(
        `secrets.production.example.json names ${name}, which .dev.vars.example gives no demo value`,
      );
    secrets[name] = demo[name];
  }
  return secrets;
}

/**
 * The main module of a production build in `dir`: index.mjs beside its chunks, or index.js for a
 * tree built before the split (one bundle).
 */
export function productionMainModule(dir) {
  const main = ["index.mjs", "index.js"].find((name) => existsSync(join(dir, name)));
  if (!main) throw new Error(`the production build in ${dir} has no index.mjs or index.js`);
  return main;
}

/**
 * Every module of the build in `dir`, the main module first, read now: workerd resolves the chunks'
 * dynamic imports among them by name, and Miniflare gets no module to parse in Node to find them.
 */
function modulesOf(dir) {
  const main = productionMainModule(dir);
  const chunks = readdirSync(dir).filter((name) => /\.m?js$/.test(name) && name !== main);
  return [main, ...chunks.sort()].map((name) => {
    const path = join(dir, name);
    return { type: "ESModule", path, contents: readFileSync(path) };
  });
}

/**
 * Miniflare's options for the production build in `dir` given `bindings` (vars and secrets): its
 * modules, compatibility date and flags, Durable Objects and KV namespaces as `config` declares them.
 */
export function productionWorker(config, dir, bindings) {
  return {
    name: config.name,
    modules: modulesOf(dir),
    // Module names are paths relative to this root: "index.mjs", "chunk-….mjs", as uploaded.
    modulesRoot: dir,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
    bindings,
    durableObjects: durableObjectsOf(config),
    kvNamespaces: Object.fromEntries(config.kv_namespaces.map((kv) => [kv.binding, kv.id])),
  };
}
