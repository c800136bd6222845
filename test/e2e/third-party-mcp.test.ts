import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { freePort } from "../../scripts/free-port.mjs";
import { offlineEnv } from "../../scripts/offline-env.mjs";
import { pinDigest, readPins, writePins } from "../../scripts/tools/mcp-pins";
import { cloneProject, ready, runIn, stopAll } from "./project-copy";

/**
 * A real third-party MCP server behind the proxy: the reference `server-everything`, run in its
 * Streamable HTTP mode on loopback. On a fresh copy of the project it is imported, reviewed, enabled
 * and checked with the commands a platform team uses, served by `npm start`, called through both of
 * the proxy's doors, refused once its reviewed definition no longer matches what it serves, and
 * served again after `npm run tools -- pin`.
 */

// Ports the OS hands out before the first test: a server or a proxy left running by an interrupted
// earlier run holds another one. The server keeps its port across its restart below.
let serverPort = 0;
let proxyPort = 0;
const server = () => `http://127.0.0.1:${serverPort}/mcp`;
const proxy = () => `http://127.0.0.1:${proxyPort}`;
const TOOLS = ["echo", "get-structured-content", "get-tiny-image"];

/** What a careful reviewer decides for each draft marker of the imported file. */
function review(dir: string) {
  const path = join(dir, "catalog", "everything.yaml");
  const draft = YAML.parse(readFileSync(path, "utf8"));
  const upstream = draft.upstreams.EVERYTHING_MCP;
  upstream.base = { sandbox: upstream.base.sandbox, production: "https://everything.example.com" };
  upstream.credential = { kind: "none" };
  upstream.idempotency.honoured = false;
  for (const tool of draft.tools) {
    // Our names are verb_noun (check says so); the server's name stays in request.tool.
    if (tool.name === "echo") tool.name = "echo_message";
    tool.side_effect = tool.side_effect.draft;
    tool.description.use_when = `A test needs the reference server's ${tool.request.tool}, e.g. ${tool.name}({}).`;
    tool.description.avoid_when = "Anything else: it is a demonstration server.";
    tool.description.side_effects = "None. Reads only.";
    for (const property of Object.values(tool.input.properties ?? {}) as Array<{ description?: string }>) {
      if (property.description?.startsWith("TODO(review):"))
        property.description = "As the server describes it.";
    }
    // A third party's text: every field whose trust the importer could not know becomes untrusted.
    const trusted = tool.output.trusted_text ?? {};
    for (const [field, reason] of Object.entries(trusted)) {
      if (typeof reason === "string" && reason.startsWith("TODO(review):")) {
        delete trusted[field];
        tool.output.untrusted = [...(tool.output.untrusted ?? []), field];
      }
    }
  }
  writeFileSync(path, YAML.stringify(draft, { lineWidth: 100 }));
}

interface Answer {
  outcome: string;
  data: Record<string, unknown> | null;
  error: { code: string; details: Record<string, unknown> | null } | null;
}

async function callRest(tool: string, args: Record<string, unknown>) {
  const opened = await fetch(`${proxy()}/v1/runs`, {
    method: "POST",
    headers: { authorization: "Bearer acme-demo-key", "content-type": "application/json" },
    body: JSON.stringify({ namespace: "everything" }),
  });
  const { data } = (await opened.json()) as { data: { run_id: string; run_token: string } };
  const response = await fetch(`${proxy()}/v1/runs/${data.run_id}/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${data.run_token}`, "content-type": "application/json" },
    body: JSON.stringify({ tool, args }),
  });
  return {
    status: response.status,
    body: (await response.json()) as Answer,
    token: data.run_token,
  };
}

/** Until the watcher of `npm start` serves the catalog as it now is on disk. */
async function served(predicate: () => Promise<boolean>) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    // While wrangler reloads the rebuilt Worker, a request may find no one listening.
    if (await predicate().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error("npm start did not serve the changed catalog within 30 s");
}

describe("a third-party MCP server (server-everything) behind the proxy", () => {
  const background: ChildProcess[] = [];
  let dir = "";

  let serverProcess: ChildProcess | null = null;
  const startServer = async () => {
    const entry = createRequire(import.meta.url).resolve(
      "@modelcontextprotocol/server-everything/dist/index.js",
    );
    serverProcess = spawn(process.execPath, [entry, "streamableHttp"], {
      env: { ...offlineEnv, PORT: String(serverPort) },
      stdio: "ignore",
      detached: true,
    });
    background.push(serverProcess);
    await ready(`http://127.0.0.1:${serverPort}/`, 15_000);
  };

  beforeAll(async () => {
    dir = cloneProject();
    serverPort = await freePort();
    proxyPort = await freePort();
    await startServer();
  });

  afterAll(() => {
    stopAll(background);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("imports, checks against the live server, serves and calls it over REST and MCP", async () => {
    const imported = runIn(
      dir,
      `npm run tools -- import mcp ${server()} --namespace everything --tools ${TOOLS.join(",")}`,
    );
    expect(imported).toContain("3 tools");
    // The draft is refused until a human has decided.
    expect(() => runIn(dir, "npm run tools -- check")).toThrow();
    review(dir);
    runIn(dir, "npm run tools -- enable everything --tenant acme --env sandbox");
    runIn(dir, "npm run tools -- check");
    expect(runIn(dir, "npm run tools -- check --remote --namespace everything")).toMatch(
      /echo_message\s+unchanged/,
    );

    background.push(
      spawn("npm", ["start"], {
        cwd: dir,
        env: { ...offlineEnv, PORT: String(proxyPort) },
        stdio: "ignore",
        detached: true,
      }),
    );
    await ready(`${proxy()}/healthz`, 90_000);

    const echoed = await callRest("echo_message", { message: "hello from the proxy" });
    expect(echoed.status, JSON.stringify(echoed.body.error)).toBe(200);
    // The server's text is a third party's: fenced.
    expect(echoed.body.data?.text).toMatch(/^\[untrusted content [0-9a-f]+: [\s\S]*hello from the proxy/);

    const structured = await callRest("get_structured_content", { location: "Chicago" });
    expect(structured.status, JSON.stringify(structured.body.error)).toBe(200);
    expect(structured.body.data).toHaveProperty("temperature");

    const image = await callRest("get_tiny_image", {});
    expect(image.status, JSON.stringify(image.body.error)).toBe(200);
    expect(String(image.body.data?.non_text)).toMatch(/image \(image\/png, \d+ bytes\)/);

    const client = new Client({ name: "e2e", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${proxy()}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${echoed.token}` } },
      }),
    );
    const result = await client.callTool({ name: "echo_message", arguments: { message: "over MCP" } });
    const envelope = (result.structuredContent ?? {}) as { outcome?: string };
    expect(envelope.outcome, JSON.stringify(result)).toBe("success");
    await client.close();
  });

  it("opens a new session when a restarted server no longer knows the proxy's", async () => {
    const stopping = serverProcess;
    if (!stopping) throw new Error("the server did not start");
    // Listened for before the signal, so an exit cannot come and go unseen.
    const exited =
      stopping.exitCode !== null || stopping.signalCode !== null
        ? Promise.resolve()
        : new Promise<void>((resolve) => stopping.once("exit", () => resolve()));
    stopAll([stopping]);
    await exited;
    await startServer();
    const after = await callRest("echo_message", { message: "after a restart" });
    expect(after.status, JSON.stringify(after.body.error)).toBe(200);
    expect(after.body.data?.text).toContain("after a restart");
  });

  it("refuses the tool once its reviewed definition no longer matches, and serves it again after pin", async () => {
    // As if the reviewer had approved another description: the pin (offline-consistent) no longer
    // matches what the server serves.
    const catalogDir = join(dir, "catalog");
    const pins = readPins(catalogDir, "everything") ?? {};
    const reviewed = pins.echo;
    if (!reviewed) throw new Error("the import recorded no definition of echo");
    pins.echo = { ...reviewed, description: `${reviewed.description} (as reviewed)` };
    writePins(catalogDir, "everything", pins);
    const path = join(catalogDir, "everything.yaml");
    const yaml = readFileSync(path, "utf8");
    const old = YAML.parse(yaml).tools.find((tool: { name: string }) => tool.name === "echo_message").request
      .pin;
    writeFileSync(path, yaml.replace(old, pinDigest(pins.echo)));
    runIn(dir, "npm run tools -- check");
    expect(() => runIn(dir, "npm run tools -- check --remote --namespace everything")).toThrow(/description/);

    await served(
      async () =>
        (await callRest("echo_message", { message: "drifted" })).body.error?.code === "upstream_changed",
    );
    const refused = await callRest("echo_message", { message: "drifted" });
    expect(refused.status).toBe(502);
    expect(refused.body.error?.details).toMatchObject({ drift: "changed", remote_tool: "echo" });

    runIn(dir, "npm run tools -- pin everything echo");
    await served(
      async () => (await callRest("echo_message", { message: "re-pinned" })).body.outcome === "success",
    );
  });
});
