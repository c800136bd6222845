import { type ChildProcess, execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { offlineEnv } from "../../scripts/offline-env.mjs";

/** What the end-to-end tests share: a fresh copy of the project to follow a newcomer's path in. */

export const root = fileURLToPath(new URL("../..", import.meta.url));

/** A fresh clone's files: what git tracks, without anything local (.dev.vars, state, builds). */
export function cloneProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "readme-own-api-"));
  const tracked = new Set(
    execFileSync("git", ["ls-files", "-co", "--exclude-standard"], { cwd: root, encoding: "utf8" })
      .split("\n")
      .filter(Boolean),
  );
  cpSync(root, dir, {
    recursive: true,
    filter: (source) => {
      const path = relative(root, source);
      if (path === "") return true;
      if (tracked.has(path)) return true;
      return [...tracked].some((file) => file.startsWith(`${path}/`));
    },
  });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  return dir;
}

/** Runs a shell script in the copy, as a newcomer pastes it; throws with its output when it fails. */
export function runIn(dir: string, script: string, env: Record<string, string> = {}): string {
  try {
    return execFileSync("bash", ["-euo", "pipefail", "-c", script], {
      cwd: dir,
      encoding: "utf8",
      env: { ...offlineEnv, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`\`${script}\` failed:\n${stdout ?? ""}${stderr ?? ""}`);
  }
}

/** Resolves once `url` answers at all, or throws after `timeoutMs`. */
export async function ready(url: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await (await fetch(url)).arrayBuffer();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** Ends background processes started detached, with everything they started. */
export function stopAll(children: ChildProcess[]) {
  for (const child of children) {
    try {
      if (child.pid) process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
}
