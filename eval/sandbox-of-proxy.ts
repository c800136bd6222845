import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProxyClient } from "../agents/client";
import { recordedRegistry } from "../scripts/stack-record.mjs";
import { TENANT_KEYS } from "./credentials";
import { ROOT } from "./paths";
import { SandboxAdmin } from "./sandbox-admin";
import type { AdminRequest } from "./source-types";

/**
 * The sandbox behind a running proxy, however its stack was started. Inside `wrangler dev` the
 * sandbox serves no port: it is reached through wrangler's dev registry, and the proxy's session
 * registered in whichever registry WRANGLER_REGISTRY_PATH named when it started (wrangler's default
 * without it; a fresh temporary one for a stack scripts/local-proxy.ts starts). So the registries
 * it may be in are tried in turn, and the one whose sandbox saw a probe call sent through this
 * proxy is the one: a sandbox of another stack is never mistaken for it.
 */

const SANDBOX_WORKER = "edge-tool-proxy-sandbox-upstream";
/** The prefix of the registries scripts/local-proxy.ts creates. */
const TEMPORARY_REGISTRY = "edge-tool-proxy-registry-";

/** A registry folder, or null for wrangler's default. */
type Registry = string | null;

/**
 * Where to look, most likely first: the registry the stack on the proxy's port noted when it
 * started (scripts/stack-record.mjs), this process's WRANGLER_REGISTRY_PATH, wrangler's default,
 * then the temporary registries of stacks started by scripts/local-proxy.ts, newest first.
 */
export function candidateRegistries(proxyUrl: string, tmp = tmpdir()): Registry[] {
  const found: Registry[] = [];
  const add = (registry: Registry | undefined) => {
    if (registry !== undefined && !found.includes(registry)) found.push(registry);
  };
  add(recordedRegistry(ROOT, proxyUrl));
  add(process.env.WRANGLER_REGISTRY_PATH || undefined);
  add(null);
  const temporary = readdirSync(tmp)
    .filter((name) => name.startsWith(TEMPORARY_REGISTRY) && existsSync(join(tmp, name, SANDBOX_WORKER)))
    .map((name) => join(tmp, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  for (const path of temporary) add(path);
  return found;
}

/** Whether a registry folder holds a sandbox whose workerd still listens; the default is always tried. */
async function mayHoldLiveSandbox(registry: Registry): Promise<boolean> {
  if (registry === null) return true;
  let address: string | undefined;
  try {
    address = (
      JSON.parse(readFileSync(join(registry, SANDBOX_WORKER), "utf8")) as { debugPortAddress?: string }
    ).debugPortAddress;
  } catch {
    return false;
  }
  const match = /^(.*):(\d+)$/.exec(address ?? "");
  if (!match) return false;
  return new Promise((resolve) => {
    const socket = connect({ host: match[1], port: Number(match[2]), timeout: 1_000 });
    const done = (alive: boolean) => {
      socket.destroy();
      resolve(alive);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.once("timeout", () => done(false));
  });
}

/** Sends one read through the proxy and returns its run id, which only that proxy's sandbox has seen. */
async function probeRun(proxyUrl: string): Promise<string> {
  const proxy = new ProxyClient(proxyUrl);
  const opened = await proxy.openRun(TENANT_KEYS.globex, { namespace: "support" });
  const run = proxy.forRun(opened);
  await run.call("lookup_order", { order_id: "B2001" });
  await run.end();
  return opened.run_id;
}

/** The admin client of the sandbox behind the proxy at `proxyUrl`; SANDBOX_ADMIN_URL, when set, wins. */
export async function connectSandboxOf(proxyUrl: string): Promise<SandboxAdmin> {
  if (process.env.SANDBOX_ADMIN_URL) return SandboxAdmin.connect();
  const runId = await probeRun(proxyUrl);
  const tried: string[] = [];
  for (const registry of candidateRegistries(proxyUrl)) {
    if (!(await mayHoldLiveSandbox(registry))) continue;
    tried.push(registry ?? "wrangler's default registry");
    let admin: SandboxAdmin | undefined;
    try {
      admin = await SandboxAdmin.connect({ registryPath: registry });
      const { requests } = await admin.get<{ requests: AdminRequest[] }>(
        `/_admin/requests?run_id=${encodeURIComponent(runId)}`,
      );
      if (requests.length > 0) return admin;
    } catch {
      // Not this registry's sandbox, or none there.
    }
    await admin?.dispose();
  }
  throw new Error(
    `found no sandbox that the proxy at ${proxyUrl} calls (looked in ${tried.length > 0 ? tried.join(", ") : "no live dev registry"}). ` +
      "Start the stack with `npm start`, set WRANGLER_REGISTRY_PATH to the registry it was started with, " +
      "or SANDBOX_ADMIN_URL to a sandbox that serves its own port.",
  );
}
