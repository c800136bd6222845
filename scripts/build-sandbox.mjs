// Bundles the sandbox upstream worker to plain JavaScript at dist/sandbox/index.js, which the
// tests load into Miniflare as an auxiliary worker. A dry-run deploy is wrangler's own bundler, so
// the output matches what `wrangler deploy` would ship, without touching the network.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { offlineEnv } from "./offline-env.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// Absolute, because wrangler resolves a relative --outdir against the config file's folder.
const outdir = join(root, "dist", "sandbox");
const args = [
  "wrangler",
  "deploy",
  "--dry-run",
  "-c",
  join("sandbox", "wrangler.toml"),
  "--env",
  "sandbox",
  "--outdir",
  outdir,
];

const result = spawnSync("npx", args, {
  cwd: root,
  stdio: "inherit",
  // npx is a .cmd shim on Windows and needs a shell there.
  shell: process.platform === "win32",
  env: offlineEnv,
});

if (result.error) {
  console.error(`build-sandbox: could not run wrangler: ${result.error.message}`);
  process.exit(1);
}
if (result.status !== 0) {
  console.error(`build-sandbox: wrangler exited with ${result.status ?? result.signal}`);
  process.exit(result.status || 1);
}
if (!existsSync(join(outdir, "index.js"))) {
  console.error(`build-sandbox: wrangler succeeded but ${join(outdir, "index.js")} is missing`);
  process.exit(1);
}
console.log(`build-sandbox: wrote ${join(outdir, "index.js")}`);
