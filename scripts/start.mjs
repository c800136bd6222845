// `npm start`: the proxy and its sandbox upstream on http://127.0.0.1:8787, offline, recompiling the
// catalog whenever a file under catalog/ changes (scripts/catalog-watch.mjs).
// Local secrets come from .dev.vars files; on a fresh clone they are created from the committed
// examples, whose demo keys are valid only here.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { catalogRecompiler, watchCatalog } from "./catalog-watch.mjs";
import { ensureDevVars, root } from "./local-stack.mjs";
import { offlineEnv } from "./offline-env.mjs";
import { recordStack } from "./stack-record.mjs";

const port = process.env.PORT ?? "8787";

ensureDevVars();
// The demo and the evaluation read this to find the sandbox inside this session (scripts/stack-record.mjs).
const forgetStack = recordStack(root, port, offlineEnv.WRANGLER_REGISTRY_PATH);

const wrangler = spawn(
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
  { cwd: root, stdio: "inherit", env: offlineEnv, shell: process.platform === "win32" },
);

const stopWatching = watchCatalog(join(root, "catalog"), catalogRecompiler(root));

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    stopWatching();
    wrangler.kill(signal);
  });
}
wrangler.on("exit", (code, signal) => {
  forgetStack();
  process.exit(code ?? (signal ? 1 : 0));
});
