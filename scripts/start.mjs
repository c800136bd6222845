// `npm start`: the proxy and its sandbox upstream on http://127.0.0.1:8787, offline, recompiling the
// catalog whenever a file under catalog/ changes (scripts/catalog-watch.mjs) and restarting when a
// .dev.vars file does (scripts/dev-vars-watch.mjs), so a secret added there is read; registered in a
// dev registry of this checkout's own (.wrangler/registry/<port>) unless WRANGLER_REGISTRY_PATH names one.
// Local secrets come from .dev.vars files; on a fresh clone they are created from the committed
// examples, whose demo keys are valid only here.
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { catalogRecompiler, watchCatalog } from "./catalog-watch.mjs";
import { superviseProcess, watchDevVars } from "./dev-vars-watch.mjs";
import { ensureDevVars, root } from "./local-stack.mjs";
import { offlineEnv } from "./offline-env.mjs";
import { recordStack, stackRegistry } from "./stack-record.mjs";

const port = process.env.PORT ?? "8787";

ensureDevVars();
// A dev registry of this checkout's own unless WRANGLER_REGISTRY_PATH names one (scripts/stack-record.mjs).
const registry = stackRegistry(root, port, offlineEnv);
mkdirSync(registry, { recursive: true });
// The demo and the evaluation read this to find the sandbox inside this session.
const forgetStack = recordStack(root, port, registry);
console.log(`wrangler dev registry: ${registry} (set WRANGLER_REGISTRY_PATH to use another)`);

const startWrangler = () =>
  spawn(
    "npx",
    [
      "wrangler",
      "dev",
      "-c",
      "wrangler.toml",
      "-c",
      join("sandbox", "wrangler.toml"),
      "--env",
      "sandbox",
      "--ip",
      "127.0.0.1",
      "--port",
      port,
      "--show-interactive-dev-session=false",
    ],
    // A group of its own, so a restart or a stop ends wrangler and workerd too, not npx alone.
    {
      cwd: root,
      stdio: "inherit",
      env: { ...offlineEnv, WRANGLER_REGISTRY_PATH: registry },
      shell: process.platform === "win32",
      detached: process.platform !== "win32",
    },
  );

const wrangler = superviseProcess(startWrangler, (code, signal) => {
  forgetStack();
  process.exit(code ?? (signal ? 1 : 0));
});

const stopWatching = watchCatalog(join(root, "catalog"), catalogRecompiler(root));
const stopWatchingVars = watchDevVars([root, join(root, "sandbox")], () => {
  console.log(".dev.vars changed: restarting the proxy and the sandbox so they read it");
  wrangler.restart();
});

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    stopWatching();
    stopWatchingVars();
    wrangler.kill(signal);
  });
}
