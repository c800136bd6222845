// Starts wrangler dev processes on loopback for benchmarks, demos and browser tests, and stops them.
import { spawn } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.mjs";
import { offlineEnv } from "./offline-env.mjs";
import { recordStack } from "./stack-record.mjs";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

const varNames = (text) => new Set([...text.matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)].map((match) => match[1]));

/**
 * Creates the local .dev.vars files from the committed examples when they are missing, and adds any
 * variable the example has gained since (a new secret) to an existing one, leaving local values be.
 */
export function ensureDevVars() {
  for (const folder of [".", "sandbox"]) {
    const vars = join(root, folder, ".dev.vars");
    const examplePath = join(root, folder, ".dev.vars.example");
    if (!existsSync(vars)) {
      copyFileSync(examplePath, vars);
      console.log(`created ${join(folder, ".dev.vars")} from the example (demo keys, local only)`);
      continue;
    }
    const have = varNames(readFileSync(vars, "utf8"));
    const missing = readFileSync(examplePath, "utf8")
      .split("\n")
      .filter((line) => /^([A-Z_][A-Z0-9_]*)=/.test(line) && !have.has(line.slice(0, line.indexOf("="))));
    if (missing.length > 0) {
      appendFileSync(vars, `\n${missing.join("\n")}\n`);
      console.log(
        `added ${missing.map((line) => line.slice(0, line.indexOf("="))).join(", ")} to ${join(folder, ".dev.vars")}`,
      );
    }
  }
}

/**
 * Runs `wrangler dev` with the given configs on 127.0.0.1:port (a port the OS hands out when none
 * is given, its inspector's too) and resolves once `readyPath` answers. State lives in a fresh temporary folder unless `persistTo` names one, so a benchmark or
 * a browser test never sees, or leaves, anyone else's refunds. `vars` replace variables of the first
 * config (`--var NAME:VALUE`, a string each), for a test that needs other settings. `stop()` ends
 * the process group.
 */
export async function startWrangler({
  configs,
  port: wantedPort,
  readyPath = "/",
  quiet = true,
  timeoutMs = 60_000,
  persistTo,
  vars = {},
}) {
  ensureDevVars();
  const port = wantedPort ?? (await freePort());
  let inspectorPort = await freePort();
  while (inspectorPort === port) inspectorPort = await freePort();
  const state = persistTo ?? mkdtempSync(join(tmpdir(), "edge-tool-proxy-state-"));
  const args = ["wrangler", "dev", ...configs.flatMap((config) => ["-c", config]), "--env", "sandbox"];
  args.push("--persist-to", state);
  args.push("--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspectorPort));
  args.push("--show-interactive-dev-session=false", "--log-level", quiet ? "error" : "info");
  for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}:${value}`);
  const child = spawn("npx", args, {
    cwd: root,
    env: offlineEnv,
    stdio: quiet ? "ignore" : "inherit",
    detached: true,
  });
  const forgetStack = recordStack(root, port, offlineEnv.WRANGLER_REGISTRY_PATH);
  const stop = () => {
    forgetStack();
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
