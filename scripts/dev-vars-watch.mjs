// `npm start` restarts the proxy when a .dev.vars file changes: wrangler dev reads local secrets
// only when it starts, while it reloads catalog (compiled module) and wrangler.toml edits by itself.
// A secret added for a tool's static header is then served on the next request, like a catalog edit.
import { watchQuietly } from "./quiet-watch.mjs";

/**
 * Calls `onChange` once for each burst of changes to the `.dev.vars` file of any of `folders`
 * (editors write a file in several steps; events within `quietMs` are one change). Returns a
 * function that stops watching.
 *
 * @param {string[]} folders
 * @param {() => void} onChange
 */
export function watchDevVars(folders, onChange, quietMs = 150) {
  return watchQuietly(folders, (file) => file === ".dev.vars", onChange, quietMs);
}

/** Whether any process of the group `pgid` still runs. */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Signals a child started `detached` and every process it started (npx, wrangler, workerd). */
function signalGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

/**
 * Keeps one child process running, started `detached` so it leads a process group of its own (npx
 * starts wrangler, which starts workerd: signalling npx alone would leave them holding the port):
 * `start()` starts it now; `restart()` ends the group (SIGTERM) and starts another once none of it
 * runs, so the new one can take the same port; `kill(signal)` ends the group for good. `onExit`
 * hears only an exit nobody asked to restart.
 *
 * @param {() => import("node:child_process").ChildProcess} start
 * @param {(code: number | null, signal: NodeJS.Signals | null) => void} onExit
 */
export function superviseProcess(start, onExit, { pollMs = 50, graceMs = 10_000 } = {}) {
  let restarting = false;
  let child = start();
  const startAgain = (pgid, since) => {
    if (groupAlive(pgid) && Date.now() - since < graceMs) {
      setTimeout(() => startAgain(pgid, since), pollMs);
      return;
    }
    if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL");
    restarting = false;
    child = start();
    follow(child);
  };
  const follow = (running) => {
    running.on("exit", (code, signal) => {
      if (running !== child) return;
      if (restarting) startAgain(running.pid, Date.now());
      else onExit(code, signal);
    });
  };
  follow(child);
  return {
    restart() {
      if (restarting) return;
      restarting = true;
      signalGroup(child, "SIGTERM");
    },
    kill(signal) {
      restarting = false;
      signalGroup(child, signal);
    },
    get pid() {
      return child.pid;
    },
  };
}
