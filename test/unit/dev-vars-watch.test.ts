import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { superviseProcess, watchDevVars } from "../../scripts/dev-vars-watch.mjs";

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a process of this id still runs. */
function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  // A negative id asks about the whole group.
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether any process of the group this leader started still runs. */
function groupAlive(pid: number | undefined): boolean {
  return pid !== undefined && alive(-pid);
}

describe("npm start's .dev.vars watch", () => {
  it("calls back once for a burst of writes to either folder's .dev.vars, and not for other files", async () => {
    const proxy = mkdtempSync(join(tmpdir(), "vars-"));
    const sandbox = mkdtempSync(join(tmpdir(), "vars-sandbox-"));
    let changes = 0;
    const stop = watchDevVars([proxy, sandbox], () => changes++, 50);
    try {
      writeFileSync(join(proxy, ".dev.vars.example"), "A=1");
      writeFileSync(join(proxy, "wrangler.toml"), "name = 'x'");
      await settle(150);
      expect(changes).toBe(0);
      for (let i = 0; i < 3; i++) writeFileSync(join(sandbox, ".dev.vars"), `WAREHOUSE_API_KEY=k${i}`);
      // Events come when they come on a busy machine: wait for the callback, then for twice the quiet time.
      await expect.poll(() => changes, { timeout: 5_000, interval: 20 }).toBeGreaterThan(0);
      await settle(100);
      expect(changes).toBe(1);
      writeFileSync(join(proxy, ".dev.vars"), "WAREHOUSE_API_KEY=k9");
      await expect.poll(() => changes, { timeout: 5_000, interval: 20 }).toBe(2);
    } finally {
      stop();
    }
  });

  it("restarts the process it keeps: the old one ends before a new one starts, and only a real exit is told", async () => {
    const started: number[] = [];
    const exits: Array<number | null> = [];
    const kept = superviseProcess(
      () => {
        // A parent and its own child, as npx starts wrangler: a restart must end both.
        const child = spawn(
          process.execPath,
          [
            "-e",
            `require("node:child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" }); setInterval(() => {}, 1000)`,
          ],
          { stdio: "ignore", detached: true },
        );
        if (child.pid !== undefined) started.push(child.pid);
        return child;
      },
      (code) => exits.push(code),
    );
    const first = kept.pid;
    expect(alive(first)).toBe(true);
    kept.restart();
    kept.restart(); // a second change while restarting restarts it once
    await expect.poll(() => started.length, { timeout: 5_000, interval: 20 }).toBe(2);
    expect(alive(first)).toBe(false);
    // None of the first group is left: the new one could take its port.
    expect(groupAlive(first)).toBe(false);
    expect(kept.pid).toBe(started[1]);
    expect(alive(kept.pid)).toBe(true);
    expect(exits).toEqual([]);
    const second = kept.pid;
    kept.kill("SIGTERM");
    await expect.poll(() => exits.length, { timeout: 5_000, interval: 20 }).toBe(1);
    await expect.poll(() => groupAlive(second), { timeout: 5_000, interval: 20 }).toBe(false);
    expect(started).toHaveLength(2);
  });
});
