import { createServer } from "node:net";

/** The part of scripts/local-stack.mjs these tests use, typed (the script is plain JavaScript). */
export interface LocalProxy {
  url: string;
  stop(): void;
}
interface LocalStackModule {
  startWrangler(options: {
    configs: string[];
    port: number;
    readyPath?: string;
    quiet?: boolean;
    timeoutMs?: number;
  }): Promise<LocalProxy>;
}

// Imported by URL at run time: tsconfig.node.json does not check JavaScript, so a static import of
// the .mjs would have no types; the interface above states what the test relies on.
const LOCAL_STACK = new URL("../../scripts/local-stack.mjs", import.meta.url).href;

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A loopback port that is free, with its inspector port (port + 1000, as startWrangler uses) free too. */
export async function freePort(from: number): Promise<number> {
  for (let port = from; port < from + 100; port++) {
    if ((await canListen(port)) && (await canListen(port + 1000))) return port;
  }
  throw new Error(`no free loopback port between ${from} and ${from + 99}`);
}

/** The proxy and its sandbox upstream under `wrangler dev`, ready once /healthz answers. */
export async function startProxy(port: number): Promise<LocalProxy> {
  const { startWrangler } = (await import(LOCAL_STACK)) as LocalStackModule;
  const proxy = await startWrangler({
    configs: ["wrangler.toml", "sandbox/wrangler.toml"],
    port,
    readyPath: "/healthz",
    timeoutMs: 90_000,
  });
  // startWrangler is satisfied by any answer; a misconfigured proxy answers 500 to everything, and
  // the usual cause locally is a .dev.vars made from an older example, which is never refreshed.
  const health = await fetch(`${proxy.url}/healthz`);
  if (health.status !== 200) {
    proxy.stop();
    const body = (await health.json()) as { error?: { message?: string } };
    throw new Error(
      `the proxy answers /healthz with ${health.status}: ${body.error?.message ?? "no message"} ` +
        "If .dev.vars predates .dev.vars.example, delete it to have it recreated.",
    );
  }
  return proxy;
}
