// `npm run bench -- --abuse`: one tenant floods the proxy while another keeps working
// (scripts/bench-abuse.mjs), against the built proxy and sandbox served by workerd.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { root } from "../scripts/local-stack.mjs";
import { miniflareOptions, proxyWorker, sandboxWorker, urlOf } from "./stack.mjs";

/** Runs the abuse load test with `args` passed on; resolves with its exit code. */
export async function runAbuse(bundles, args) {
  const proxy = proxyWorker(bundles);
  const mf = new Miniflare(miniflareOptions([proxy, sandboxWorker(bundles)]));
  try {
    await mf.ready;
    const url = await urlOf(mf, proxy.name);
    // Not spawnSync: workerd's output reaches this process through pipes, which must keep draining.
    const child = spawn(
      process.execPath,
      [join(root, "scripts", "bench-abuse.mjs"), "--url", url, "--control", ...args],
      { stdio: "inherit" },
    );
    const [code] = await once(child, "exit");
    return code ?? 1;
  } finally {
    await mf.dispose();
  }
}
