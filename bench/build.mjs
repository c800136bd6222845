// Builds what a deploy of the sandbox environment ships: wrangler's own bundler in a dry run,
// minified, for the proxy (wrangler.toml) and for its sandbox upstream (sandbox/wrangler.toml).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { root } from "../scripts/local-stack.mjs";
import { offlineEnv } from "../scripts/offline-env.mjs";

/** Runs wrangler with no network and no banner (its update check would leave the machine). */
export function wrangler(args, cwd = root) {
  const result = spawnSync("npx", ["wrangler", ...args], {
    cwd,
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
 * Builds both Workers of the tree at `from` (this one by default; another worktree or checkout for a
 * before/after comparison, built with its own wrangler.toml and sources) into `outdir` (absolute:
 * wrangler resolves a relative one against the config's folder). Returns each module's path, the
 * proxy's upload form as `wrangler deploy` would send it (which `wrangler check startup --worker`
 * reads), the folder and upload form of the production build (for its size, startup CPU and cold start) and the tree it was built from.
 */
export function buildBundles(outdir, from = root) {
  const proxyDir = join(outdir, "proxy");
  const sandboxDir = join(outdir, "sandbox");
  const uploadForm = join(outdir, "proxy.upload");
  const dryRun = ["deploy", "--dry-run", "--env", "sandbox", "--minify"];
  wrangler(
    [...dryRun, "-c", join(from, "wrangler.toml"), "--outdir", proxyDir, "--outfile", uploadForm],
    from,
  );
  wrangler([...dryRun, "-c", join(from, "sandbox", "wrangler.toml"), "--outdir", sandboxDir], from);
  // What a production deploy ships (split into a main module and chunks loaded on first use where the
  // tree's wrangler.toml says so): measured for its size, startup CPU and cold start (served to its
  // first /healthz only, with stand-in upstream URLs), never under load.
  const productionDir = join(outdir, "production");
  const productionForm = join(outdir, "production.upload");
  wrangler(
    [
      "deploy",
      "--dry-run",
      "--env",
      "production",
      "-c",
      join(from, "wrangler.toml"),
      "--outdir",
      productionDir,
      "--outfile",
      productionForm,
    ],
    from,
  );
  const bundles = {
    proxy: join(proxyDir, "index.js"),
    sandbox: join(sandboxDir, "index.js"),
    uploadForm,
  };
  for (const path of Object.values(bundles)) {
    if (!existsSync(path)) throw new Error(`bench: wrangler's dry run succeeded but ${path} is missing`);
  }
  return { ...bundles, production: productionDir, productionForm, root: from };
}
