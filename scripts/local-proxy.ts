import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The repository root, whichever folder the script was started from. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** A proxy (with its sandbox) to evaluate against: one already running, or one this process started. */
export interface LocalProxy {
  url: string;
  /** True when this process started it, and so must stop it. */
  started: boolean;
  stop(): void;
}

interface LocalStackModule {
  startWrangler(options: {
    configs: string[];
    port?: number;
    readyPath?: string;
    quiet?: boolean;
    timeoutMs?: number;
    vars?: Record<string, string>;
  }): Promise<{ url: string; stop(): void }>;
}

/** Whether a proxy answers `GET /healthz` with 200 at this address. */
export async function isHealthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url.replace(/\/+$/, "")}/healthz`, {
      signal: AbortSignal.timeout(2_000),
    });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * Starts the proxy and its sandbox with `wrangler dev` (scripts/local-stack.mjs: loopback, a port
 * the OS hands out, a fresh temporary state folder). It registers its workers in a private dev registry, so the admin client
 * of this process reaches this sandbox and not the one of an `npm start` running beside it. `vars`
 * replace the proxy's variables (a test's own TENANTS, as a JSON string).
 */
export async function startProxy(options: { vars?: Record<string, string> } = {}): Promise<LocalProxy> {
  process.env.WRANGLER_REGISTRY_PATH = mkdtempSync(join(tmpdir(), "edge-tool-proxy-registry-"));
  // Imported only now: the script snapshots the environment (for wrangler) when it is loaded.
  const stack = (await import(
    pathToFileURL(join(ROOT, "scripts", "local-stack.mjs")).href
  )) as LocalStackModule;
  const proxy = await stack.startWrangler({
    configs: ["wrangler.toml", "sandbox/wrangler.toml"],
    readyPath: "/healthz",
    timeoutMs: 90_000,
    vars: options.vars,
  });
  if (!(await isHealthy(proxy.url))) {
    proxy.stop();
    throw new Error(
      `the proxy started on ${proxy.url} does not answer /healthz with 200. If .dev.vars predates .dev.vars.example, delete it to have it recreated.`,
    );
  }
  return { url: proxy.url, started: true, stop: proxy.stop };
}

/** An already running proxy: never stopped by this process. */
export function existingProxy(url: string): LocalProxy {
  return { url: url.replace(/\/+$/, ""), started: false, stop: () => {} };
}
