import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/free-port.mjs";
import { offlineEnv } from "../../scripts/offline-env.mjs";
import { cloneProject, ready, runIn, stopAll } from "./project-copy";

/**
 * The docs' commands on a fresh clone: `check --remote` passes (the helpdesk, a service of the local
 * stack, is skipped and says so), `npm start` registers its workers in a dev registry of the
 * checkout's own, and the sandbox's records are read with `npm run sandbox`.
 */

/** The environment a newcomer's shell has: no registry named, so `npm start` picks its own. */
const { WRANGLER_REGISTRY_PATH: _named, ...shell } = offlineEnv;

let dir = "";
let port = 0;
const background: ChildProcess[] = [];

beforeAll(async () => {
  dir = cloneProject();
  port = await freePort();
});

afterAll(() => {
  stopAll(background);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `npm run <script>` in the copy; its exit code and what it printed, apart. */
function npmRun(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", "-s", ...args], { cwd: dir, env: { ...shell, PORT: String(port) } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

describe("the docs' commands on a fresh clone", () => {
  it("check --remote passes, saying which upstream it cannot list and why", () => {
    const output = runIn(dir, "npm run tools -- check --remote", shell as Record<string, string>);
    expect(output).toMatch(/helpdesk\.yaml: HELPDESK_MCP: skipped: no URL to list it at/);
  });

  it("npm run sandbox says when no proxy runs, and refuses records it does not know", async () => {
    const none = await npmRun(["sandbox", "--", "refunds"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      `no proxy answers at http://127.0.0.1:${port}: start it with \`npm start\``,
    );
    const unknown = await npmRun(["sandbox", "--", "refund"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no records called "refund"');
  });

  it("npm start registers in the checkout's own registry, and npm run sandbox reads its records", async () => {
    const child = spawn("npm", ["start"], {
      cwd: dir,
      env: { ...shell, PORT: String(port) },
      stdio: "ignore",
      detached: true,
    });
    background.push(child);
    await ready(`http://127.0.0.1:${port}/healthz`, 120_000);
    const registry = join(dir, ".wrangler", "registry", String(port));
    expect(existsSync(join(registry, "edge-tool-proxy-sandbox-upstream"))).toBe(true);
    const note = JSON.parse(readFileSync(join(dir, ".wrangler", "local-stacks", `${port}.json`), "utf8"));
    expect(note).toEqual({ port, registry_path: registry });

    // A refund globex auto-approves, through the proxy.
    const base = `http://127.0.0.1:${port}`;
    const opened = (await (
      await fetch(`${base}/v1/runs`, {
        method: "POST",
        headers: { authorization: "Bearer globex-demo-key", "content-type": "application/json" },
        body: JSON.stringify({ namespace: "support" }),
      })
    ).json()) as { data: { run_id: string; run_token: string } };
    const { run_id: runId, run_token: token } = opened.data;
    const refunded = (await (
      await fetch(`${base}/v1/runs/${runId}/calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          tool: "issue_refund",
          args: { order_id: "B2003", amount_cents: 200, reason: "user_cancel" },
        }),
      })
    ).json()) as { outcome: string };
    expect(refunded.outcome).toBe("success");

    const refunds = await npmRun(["sandbox", "--", "refunds", "--order", "B2003", "--run", runId]);
    expect(refunds.code, refunds.stderr).toBe(0);
    const listed = JSON.parse(refunds.stdout) as { refunds: Array<Record<string, unknown>> };
    expect(listed.refunds).toEqual([
      expect.objectContaining({ order_id: "B2003", amount_cents: 200, run_id: runId, tenant: "globex" }),
    ]);
    const requests = await npmRun(["sandbox", "--", "requests", "--run", runId]);
    expect(requests.code, requests.stderr).toBe(0);
    const sent = (JSON.parse(requests.stdout) as { requests: Array<{ path: string; status: number }> })
      .requests;
    expect(sent.filter((request) => request.path === "/refunds").map((request) => request.status)).toEqual([
      201,
    ]);
  });
});
