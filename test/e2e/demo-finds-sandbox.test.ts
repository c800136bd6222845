import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectSandboxOf } from "../../eval/sandbox-of-proxy";
import type { AdminRequest } from "../../eval/source-types";
import { freePort } from "../../scripts/free-port.mjs";

/**
 * `npm run demo` against a proxy it did not start reads that proxy's sandbox, found in whichever dev
 * registry the stack was started with. Here the stack registers in a folder no default would name
 * (not wrangler's, not the temporary ones scripts/local-proxy.ts makes), and the client looks with
 * another WRANGLER_REGISTRY_PATH, as a second shell would.
 */

// Not from ./project-copy: it loads scripts/offline-env.mjs, which would fix wrangler's environment
// before this file names the stack's registry.
const root = fileURLToPath(new URL("../..", import.meta.url));
let stop = () => {};
let url = "";
const registries: string[] = [];
const registry = (prefix: string) => {
  const path = mkdtempSync(join(tmpdir(), prefix));
  registries.push(path);
  return path;
};
let note = "";
let elsewhere = "";

beforeAll(async () => {
  const previous = process.env.WRANGLER_REGISTRY_PATH;
  elsewhere = registry("stack-started-elsewhere-");
  process.env.WRANGLER_REGISTRY_PATH = elsewhere;
  // Imported only now: the module hands wrangler the environment it finds when loaded.
  const stack = (await import(pathToFileURL(join(root, "scripts", "local-stack.mjs")).href)) as {
    startWrangler(options: object): Promise<{ url: string; stop(): void }>;
  };
  const port = await freePort();
  note = join(root, ".wrangler", "local-stacks", `${port}.json`);
  const started = await stack.startWrangler({
    configs: ["wrangler.toml", "sandbox/wrangler.toml"],
    port,
    readyPath: "/healthz",
    timeoutMs: 90_000,
  });
  ({ stop, url } = started);
  process.env.WRANGLER_REGISTRY_PATH = previous ?? registry("client-registry-");
}, 120_000);

afterAll(() => {
  stop();
  for (const path of registries) rmSync(path, { recursive: true, force: true });
});

describe("the demo's sandbox, wherever the stack registered", () => {
  it("is found through the note the stack left for its port, with another registry in this shell", async () => {
    expect(existsSync(join(elsewhere, "edge-tool-proxy-sandbox-upstream"))).toBe(true);
    expect(existsSync(note)).toBe(true);
    process.env.WRANGLER_REGISTRY_PATH = registry("client-registry-");
    const admin = await connectSandboxOf(url);
    try {
      const before = await admin.get<{ requests: AdminRequest[] }>("/_admin/requests");
      expect(before.requests.some((request) => request.tenant === "globex")).toBe(true);
    } finally {
      await admin.dispose();
    }
  });

  it("is found through this shell's WRANGLER_REGISTRY_PATH when the stack left no note", async () => {
    const kept = `${note}.kept`;
    rmSync(kept, { force: true });
    renameSync(note, kept);
    try {
      process.env.WRANGLER_REGISTRY_PATH = elsewhere;
      const admin = await connectSandboxOf(url);
      await admin.dispose();
    } finally {
      renameSync(kept, note);
    }
  });

  it("is never another stack's: with no way to it, the demo says where it looked and what to do", async () => {
    const kept = `${note}.kept`;
    renameSync(note, kept);
    try {
      process.env.WRANGLER_REGISTRY_PATH = registry("client-registry-");
      await expect(connectSandboxOf(url)).rejects.toThrow(
        new RegExp(
          `found no sandbox that the proxy at ${url.replaceAll(".", "\\.")} calls \\(looked in .*WRANGLER_REGISTRY_PATH`,
        ),
      );
    } finally {
      renameSync(kept, note);
    }
  });
});
