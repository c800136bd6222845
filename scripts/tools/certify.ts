// `npm run tools -- certify <ns> [--env sandbox|production] [--url <base url>] [--header "Name: value"]...
// [--tenant <id>] [--catalog <dir>]`: whether each upstream of a namespace applies an idempotency key
// once and refuses requests without a valid credential, measured (certify-probes.ts) and written to
// `<catalog>/<ns>.certification.json` (src/catalog/certification.ts). Writes happen in the sandbox
// only; production gets the credential probes on reads, and only when named with --env production.
import { existsSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import {
  type CertificationRecord,
  CertificationRecordSchema,
  certificationOf,
  type ProbeResult,
  upstreamDigest,
} from "../../src/catalog/certification";
import { parseUpstreamSigningKeys, type UpstreamSigningKey } from "../../src/config/signing-keys";
import { newRunId } from "../../src/core/ids";
import { loadNamespace } from "./certify-namespace";
import { certifyUpstream } from "./certify-probes";
import { CertifyError, readDevVars, UpstreamReach, wranglerEnvironment } from "./certify-reach";
import { forgedKey } from "./certify-send";
import { connectionOptions, parseHeaders, RemoteError } from "./mcp-remote";
import { parseEnvironmentTenants } from "./tenants-check";

type Environment = "sandbox" | "production";

const USAGE =
  'usage: npm run tools -- certify <ns> [--env sandbox|production] [--url <base url>] [--header "Name: value"]... [--tenant <id>] [--catalog <dir>]';

interface Options {
  namespace: string;
  environment: Environment;
  url: string | null;
  headers: Record<string, string>;
  tenant: string | null;
  catalogDir: string;
}

function parseOptions(args: readonly string[]): Options | string {
  const { url, headers, rest } = connectionOptions(args);
  const options: Partial<Options> & { environment: Environment } = { environment: "sandbox" };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? "";
    const value = rest[i + 1];
    if (arg === "--env") {
      if (value !== "sandbox" && value !== "production")
        return `--env: "${value ?? ""}" is sandbox or production`;
      options.environment = value;
      i++;
    } else if (arg === "--tenant" || arg === "--catalog") {
      if (!value || value.startsWith("--")) return `${arg} needs a value`;
      if (arg === "--tenant") options.tenant = value;
      else options.catalogDir = resolve(value);
      i++;
    } else if (!arg.startsWith("--") && options.namespace === undefined) options.namespace = arg;
    else return `unexpected ${JSON.stringify(arg)}`;
  }
  if (!options.namespace) return "name the namespace to certify";
  if (url !== null && !/^https?:\/\/[^\s/?#]+/.test(url))
    return `--url ${JSON.stringify(url)}: an http(s) base URL`;
  try {
    return {
      namespace: options.namespace,
      environment: options.environment,
      url,
      headers: parseHeaders(headers),
      tenant: options.tenant ?? null,
      catalogDir: options.catalogDir ?? "",
    };
  } catch (error) {
    if (error instanceof RemoteError) return error.message;
    throw error;
  }
}

/** The first tenant of the environment that has the namespace: whose data the probes act on. */
function defaultTenant(root: string, environment: Environment, namespace: string): string {
  const { tenants } = parseEnvironmentTenants(
    environment,
    wranglerEnvironment(root, environment).vars.TENANTS,
  );
  const tenant = tenants.find(({ tenant }) => tenant.namespaces.includes(namespace));
  if (!tenant) {
    throw new CertifyError(
      `no tenant of wrangler.toml's [env.${environment}] has the namespace ${namespace}: give --tenant <id>`,
    );
  }
  return tenant.id;
}

/**
 * The proxy's signing keys: UPSTREAM_SIGNING_KEYS from the environment when set, else (sandbox) the
 * demo keys of .dev.vars.example, which the sandbox's UPSTREAM_JWKS trusts; production has none else.
 */
function signingKeys(root: string, environment: Environment): UpstreamSigningKey[] | null {
  const fromEnv = process.env.UPSTREAM_SIGNING_KEYS;
  if (fromEnv) return parseUpstreamSigningKeys("UPSTREAM_SIGNING_KEYS", fromEnv);
  if (environment === "production") return null;
  const example = join(root, ".dev.vars.example");
  const demo = existsSync(example) ? readDevVars(example).UPSTREAM_SIGNING_KEYS : undefined;
  return demo ? parseUpstreamSigningKeys("UPSTREAM_SIGNING_KEYS of .dev.vars.example", demo) : null;
}

/** Where a certification is kept: production's beside the sandbox's, never over it. */
function certificationPath(catalogDir: string, namespace: string, environment: Environment): string {
  return join(
    catalogDir,
    `${namespace}.certification${environment === "production" ? ".production" : ""}.json`,
  );
}

const line = (probe: ProbeResult) =>
  `  ${probe.result.padEnd(7)} ${probe.tool} ${probe.probe}: ${probe.detail}`;

/**
 * The command: probes every upstream of the namespace, prints a line per probe, and writes the
 * record when every probe ran or was skipped for a stated reason. Returns the exit code: 0 when
 * every upstream passed, 1 when one failed (the record is written: a refuted upstream is a finding)
 * or a probe could not be judged (nothing is written), 2 for a usage error.
 */
export async function runCertify(
  root: string,
  args: readonly string[],
  print: (line: string) => void = console.log,
  printError: (line: string) => void = console.error,
): Promise<number> {
  const options = parseOptions(args);
  if (typeof options === "string") {
    printError(`certify: ${options}\n${USAGE}`);
    return 2;
  }
  const { environment } = options;
  const catalogDir = options.catalogDir || join(root, "catalog");
  const reach = new UpstreamReach(root, environment, options.url);
  const effects: string[] = [];
  const reached = new Map<string, { url: string; local: boolean }>();
  let current = "";
  try {
    const ns = loadNamespace(catalogDir, options.namespace);
    const tenant = options.tenant ?? defaultTenant(root, environment, ns.namespace);
    const keys = signingKeys(root, environment);
    const run = newRunId();
    print(`certify ${ns.namespace} in ${environment}, as tenant ${tenant} (run ${run})`);
    const context = {
      environment,
      signer: { tenant, run, keys, secrets: process.env },
      forged: await forgedKey(keys?.[0]?.kid ?? "certify-forged"),
      headers: options.headers,
      effects,
      report: (probe: ProbeResult) => print(line(probe)),
      reach: async (name: string) => {
        let found = reached.get(name);
        if (!found) {
          const upstream = ns.upstreams.find((candidate) => candidate.name === name);
          found = await reach.reach(name, upstream?.declaration.base);
          reached.set(name, found);
          print(`  ${name} at ${found.url}${found.local ? " (the sandbox Worker, started here)" : ""}`);
        }
        return found.url;
      },
    };
    const record: CertificationRecord = {
      format: 1,
      namespace: ns.namespace,
      environment,
      certified_at: new Date().toISOString(),
      upstreams: {},
    };
    for (const upstream of ns.upstreams) {
      current = upstream.name;
      const honoured = upstream.honoured === null ? "" : ` (declared honoured: ${upstream.honoured})`;
      print(`${upstream.name}${honoured}`);
      const probes = await certifyUpstream(context, ns, upstream);
      const verdict = probes.some((probe) => probe.result === "fail") ? "fail" : "pass";
      record.upstreams[upstream.name] = {
        digest: await upstreamDigest(ns.raw, upstream.name),
        verdict,
        probes,
      };
      const count = (outcome: ProbeResult["result"]) =>
        probes.filter((probe) => probe.result === outcome).length;
      print(
        `${upstream.name}: ${verdict} (${count("pass")} passed, ${count("fail")} failed, ${count("skipped")} skipped)`,
      );
    }
    current = "";
    const written = CertificationRecordSchema.parse(record);
    const path = certificationPath(catalogDir, ns.namespace, environment);
    writeFileSync(path, `${JSON.stringify(written, null, 2)}\n`);
    print(`wrote ${relative(process.cwd(), path) || path}`);
    for (const [name, entry] of Object.entries(written.upstreams)) {
      const { status, key_reuse, credential } = certificationOf(written, name, entry.digest);
      print(
        `  ${name}: ${status} (key reuse: ${key_reuse ?? "not probed"}, credential: ${credential ?? "not probed"})`,
      );
    }
    return Object.values(written.upstreams).some((entry) => entry.verdict === "fail") ? 1 : 0;
  } catch (error) {
    if (!(error instanceof CertifyError)) throw error;
    printError(`certify: ${current ? `${current} ` : ""}${error.message}; nothing written`);
    return 1;
  } finally {
    await reach.dispose();
    if (effects.length > 0) {
      const local = [...reached.values()].every((found) => found.local);
      print(
        local
          ? `left in the local sandbox, disposed with it: ${effects.join(", ")}`
          : `left in the ${environment} (it offers no route to delete them): ${effects.join(", ")}`,
      );
    }
  }
}
