// Where `npm run tools -- certify` sends an upstream's requests: `--url` when given, else the
// upstream's declared base for the environment, else (sandbox) the sandbox Worker started here in
// Miniflare when wrangler.toml's [env.sandbox] binds the upstream to it as a service, or
// (production) the URL var of that name in [env.production.vars].
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Miniflare } from "miniflare";
import { unstable_readConfig as readConfig } from "wrangler";

/** A refusal the command prints as it is, and after which it writes nothing. */
export class CertifyError extends Error {}

type Environment = "sandbox" | "production";

/** The built sandbox Worker (`npm run build:sandbox`), as vitest.config.ts serves it to the tests. */
const SANDBOX_SCRIPT = join("dist", "sandbox", "index.js");

/** KEY=value lines of a .dev.vars file: the committed examples hold only demo values. */
export function readDevVars(path: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match?.[1] && match[2] !== undefined) vars[match[1]] = match[2];
  }
  return vars;
}

/** What certify reads of a Worker's configuration (wrangler's own type does not reach this project's Worker types). */
interface WorkerConfig {
  name: string;
  compatibility_date: string;
  compatibility_flags: string[];
  migrations: { new_sqlite_classes?: string[] }[];
  durable_objects: { bindings: { name: string; class_name: string }[] };
  vars: Record<string, unknown>;
  services?: { binding: string; service?: string }[];
}

const workerConfig = (path: string, environment: Environment): WorkerConfig =>
  readConfig({ config: path, env: environment }, { hideWarnings: true }) as WorkerConfig;

/** One environment of wrangler.toml, as the pinned wrangler reads it. */
export const wranglerEnvironment = (root: string, environment: Environment) =>
  workerConfig(join(root, "wrangler.toml"), environment);

/** The sandbox Worker in a Miniflare of its own on a loopback port the OS gives, with fresh storage. */
async function startSandbox(root: string): Promise<{ url: string; dispose: () => Promise<void> }> {
  const script = join(root, SANDBOX_SCRIPT);
  if (!existsSync(script)) {
    throw new CertifyError(`${SANDBOX_SCRIPT} is missing: run \`npm run build:sandbox\` first`);
  }
  const config = workerConfig(join(root, "sandbox", "wrangler.toml"), "sandbox");
  const sqlite = new Set(config.migrations.flatMap((migration) => migration.new_sqlite_classes ?? []));
  const output: string[] = [];
  const keep = (stream: NodeJS.ReadableStream) =>
    stream.on("data", (chunk: Buffer) => {
      output.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      output.splice(0, Math.max(0, output.length - 20));
    });
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    // No request.cf: Miniflare would otherwise download it from Cloudflare.
    cf: false,
    handleRuntimeStdio: (stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) => {
      keep(stdout);
      keep(stderr);
    },
    name: config.name,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
    // The bundle itself: given a path alone, Miniflare would parse it in Node to find its imports.
    modules: [{ type: "ESModule", path: script, contents: readFileSync(script) }],
    modulesRoot: dirname(script),
    durableObjects: Object.fromEntries(
      config.durable_objects.bindings.map((binding) => [
        binding.name,
        { className: binding.class_name, useSQLite: sqlite.has(binding.class_name) },
      ]),
    ),
    bindings: {
      ...(config.vars as Record<string, string>),
      ...readDevVars(join(root, "sandbox", ".dev.vars.example")),
    },
  });
  try {
    const url = (await mf.ready).toString().replace(/\/+$/, "");
    return { url, dispose: () => mf.dispose() };
  } catch (error) {
    await mf.dispose().catch(() => undefined);
    const reason = error instanceof Error ? error.message : String(error);
    throw new CertifyError(`the local sandbox did not start: ${reason}\n${output.join("\n")}`);
  }
}

/** Where an upstream is, and whether it is the sandbox Worker this command started (and disposes). */
export interface Reached {
  url: string;
  local: boolean;
}

/**
 * Finds each upstream's base URL, starting the local sandbox at most once; `dispose` stops it.
 * Construct it with the `--url` of the command (null when not given).
 */
export class UpstreamReach {
  private sandbox: Promise<{ url: string; dispose: () => Promise<void> }> | null = null;
  private config: WorkerConfig | null = null;

  constructor(
    private readonly root: string,
    private readonly environment: Environment,
    private readonly url: string | null,
  ) {}

  private wrangler() {
    this.config ??= wranglerEnvironment(this.root, this.environment);
    return this.config;
  }

  /** The upstream's base: `declared` is its `base` as the namespace declares it. */
  async reach(name: string, declared: unknown): Promise<Reached> {
    if (this.url !== null) return { url: this.url.replace(/\/+$/, ""), local: false };
    const base = (declared as Record<string, unknown> | undefined)?.[this.environment];
    if (typeof base === "string") return { url: base.replace(/\/+$/, ""), local: false };
    if (this.environment === "production") {
      const value = this.wrangler().vars[name];
      if (typeof value === "string" && /^https?:\/\//.test(value)) {
        return { url: value.replace(/\/+$/, ""), local: false };
      }
      throw new CertifyError(
        `${name} has no base.production and wrangler.toml's [env.production.vars] gives it no URL: give --url`,
      );
    }
    const sandboxName = workerConfig(join(this.root, "sandbox", "wrangler.toml"), "sandbox").name;
    const bound = this.wrangler().services?.some(
      (service) => service.binding === name && service.service === sandboxName,
    );
    if (!bound) {
      throw new CertifyError(
        `${name} has no base.sandbox and wrangler.toml's [env.sandbox] binds it to no service of the sandbox Worker (${sandboxName}): give --url`,
      );
    }
    this.sandbox ??= startSandbox(this.root);
    return { url: (await this.sandbox).url, local: true };
  }

  async dispose(): Promise<void> {
    const started = this.sandbox;
    this.sandbox = null;
    if (started) await (await started.catch(() => null))?.dispose();
  }
}
