// Starts wrangler dev processes on loopback for benchmarks, demos and browser tests, and stops them.
import { spawn } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { offlineEnv } from "./offline-env.mjs";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Creates the local .dev.vars files from the committed examples when they are missing. */
export function ensureDevVars() {
  for (const folder of [".", "sandbox"]) {
    const vars = join(root, folder, ".dev.vars");
    if (!existsSync(vars)) copyFileSync(join(root, folder, ".dev.vars.example"), vars);
  }
}

/**
 * Runs `wrangler dev` with the given configs on 127.0.0.1:port and resolves once `readyPath`
 * answers. The returned `stop()` ends the process group.
 */
export async function startWrangler({ configs, port, readyPath = "/", quiet = true, timeoutMs = 60_000 }) {
  ensureDevVars();
  const args = ["wrangler", "dev", ...configs.flatMap((config) => ["-c", config]), "--env", "sandbox"];
  args.push("--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(port + 1000));
  args.push("--show-interactive-dev-session=false", "--log-level", quiet ? "error" : "info");
  const child = spawn("npx", args, { cwd: root, env: offlineEnv, stdio: quiet ? "ignore" : "inherit", detached: true });
  const stop = () => {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  };
  process.on("exit", stop);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}${readyPath}`);
      await response.arrayBuffer();
      return { stop, url: `http://127.0.0.1:${port}` };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  stop();
  throw new Error(`wrangler dev on port ${port} did not become ready within ${timeoutMs} ms`);
}
