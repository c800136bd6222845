// `npm run sandbox -- <records> [options]`: the sandbox's own records (refunds made, requests received,
// tickets, emails, drafts, shipments, approval webhooks) as JSON, read from its admin API
// (sandbox/API.md, "Admin") behind a running `npm start`: what really happened upstream, whatever
// the proxy answered. Under `npm start` the sandbox serves no port of its own, so it is reached
// through the dev registry the stack noted for its port (scripts/stack-record.mjs), or found through
// the proxy (eval/sandbox-of-proxy.ts); SANDBOX_ADMIN_URL names a sandbox that serves its own.
//   npm run sandbox -- refunds --order A1001
//   npm run sandbox -- requests --run <run id>
import { ROOT } from "../eval/paths";
import { SandboxAdmin } from "../eval/sandbox-admin";
import { connectSandboxOf } from "../eval/sandbox-of-proxy";
import { isHealthy } from "./local-proxy";
import { narrowToRun, parseRecordsArgs, SANDBOX_USAGE } from "./sandbox-records";
import { recordedRegistry } from "./stack-record.mjs";

/** The admin client of the sandbox the proxy at `proxyUrl` calls. */
async function connect(proxyUrl: string): Promise<SandboxAdmin> {
  if (process.env.SANDBOX_ADMIN_URL) return SandboxAdmin.connect();
  const registry = recordedRegistry(ROOT, proxyUrl);
  if (registry !== undefined) return SandboxAdmin.connect({ registryPath: registry });
  // No note for that port (a stack started another way): one read through the proxy finds its sandbox.
  return connectSandboxOf(proxyUrl);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args[0] === "--help" || args[0] === "-h") {
    console.log(SANDBOX_USAGE);
    return 0;
  }
  const query = parseRecordsArgs(args);
  if ("problem" in query) {
    console.error(`sandbox: ${query.problem}\n${SANDBOX_USAGE}`);
    return 2;
  }
  const proxyUrl = (query.proxy ?? `http://127.0.0.1:${process.env.PORT ?? "8787"}`).replace(/\/+$/, "");
  if (!process.env.SANDBOX_ADMIN_URL && !(await isHealthy(proxyUrl))) {
    console.error(
      `sandbox: no proxy answers at ${proxyUrl}: start it with \`npm start\` (PORT=… for another port), or give --proxy <url>`,
    );
    return 1;
  }
  const admin = await connect(proxyUrl);
  try {
    const answer = await admin.get<Record<string, unknown>>(query.path);
    console.log(JSON.stringify(narrowToRun(answer, query), null, 2));
    return 0;
  } finally {
    await admin.dispose();
  }
}

process.exitCode = await main().catch((error: unknown) => {
  console.error(`sandbox: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
});
