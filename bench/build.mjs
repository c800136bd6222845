// Builds what a deploy of the sandbox environment ships: wrangler's own bundler in a dry run,
// minified, for the proxy (wrangler.toml) and for its sandbox upstream (sandbox/wrangler.toml).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { root } from "../scripts/local-stack.mjs";
import { offlineEnv } from "../scripts/offline-env.mjs";

/** Runs wrangler with no network and no banner (its update check would leave the machine). */
export function wrangler(args) {
  const result = spawnSync("npx", ["wrangler", ...args], {
    cwd: root,
    env: { ...offlineEnv, WRANGLER_HIDE_BANNER: "true" },
    encoding: "utf8",
    // npx is a .cmd shim on Windows and needs a shell there.
    shell: process.platform === "win32",
  });
  if (result.status !== 0) {
    throw new Error(
      `bench: wrangler ${args.join(" ")} exited with ${result.status ?? result.signal}:\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/**
 * Builds both Workers into `outdir` (absolute: wrangler resolves a relative one against the config's
 * folder). Returns each module's path, and the proxy's upload form as `wrangler deploy` would send
 * it, which `wrangler check startup --worker` reads.
 */
export function buildBundles(outdir) {
  const proxyDir = join(outdir, "proxy");
  const sandboxDir = join(outdir, "sandbox");
  const uploadForm = join(outdir, "proxy.upload");
  const dryRun = ["deploy", "--dry-run", "--env", "sandbox", "--minify"];
  wrangler([...dryRun, "-c", join(root, "wrangler.toml"), "--outdir", proxyDir, "--outfile", uploadForm]);
  wrangler([...dryRun, "-c", join(root, "sandbox", "wrangler.toml"), "--outdir", sandboxDir]);
  const bundles = {
    proxy: join(proxyDir, "index.js"),
    sandbox: join(sandboxDir, "index.js"),
    uploadForm,
  };
  for (const path of Object.values(bundles)) {
    if (!existsSync(path)) throw new Error(`bench: wrangler's dry run succeeded but ${path} is missing`);
  }
  return bundles;
}
