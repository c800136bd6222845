import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { freePort } from "../../scripts/free-port.mjs";
import { offlineEnv } from "../../scripts/offline-env.mjs";
import { links, section } from "../../scripts/readme/markdown";
import { markdownFiles } from "../../scripts/readme/regions";
import { cloneProject, ready, root, runIn, stopAll } from "./project-copy";

/**
 * The documented path "Put your own API behind the proxy" (a section of README.md or of a page under
 * docs/, wherever it lives; README.md links to it), followed as a newcomer would on a fresh clone:
 * its shell blocks run as written in a copy of the project (no .dev.vars, no compiled state), its
 * YAML block is the human's review of the draft, and its two long-running commands are started
 * in the background. Only the ports differ: the proxy's (the docs: 8787) and the example server's
 * (the docs: 8795) are ones the OS hands out, so a running `npm start`, an example server left by
 * an interrupted run and this test never meet.
 */

const DOCUMENTED_PORT = 8787;
const DOCUMENTED_EXAMPLE_PORT = 8795;
let proxyPort = 0;
let examplePort = 0;
const LONG_RUNNING = /^(npm start|node examples\/[a-z-]+\/server\.mjs)$/;

interface Block {
  lang: string;
  text: string;
}

const TITLE = "Put your own API behind the proxy";

/** The one Markdown page holding the section titled `title`, and the section's code blocks. */
function documentedSection(title: string): { file: string; blocks: Block[] } {
  const found = markdownFiles(root).flatMap((file) => {
    const text = section(readFileSync(join(root, file), "utf8"), title);
    return text === undefined ? [] : [{ file, text }];
  });
  const [only] = found;
  if (!only || found.length > 1) {
    throw new Error(`expected one section "${title}" in README.md or docs/, found ${found.length}`);
  }
  const blocks = [...only.text.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((match) => ({
    lang: match[1] ?? "",
    text: match[2] ?? "",
  }));
  return { file: only.file, blocks };
}

/** The documented addresses, moved to this run's ports. */
function onOurPorts(text: string): string {
  return text
    .replaceAll(`127.0.0.1:${DOCUMENTED_PORT}`, `127.0.0.1:${proxyPort}`)
    .replaceAll(`127.0.0.1:${DOCUMENTED_EXAMPLE_PORT}`, `127.0.0.1:${examplePort}`);
}

/**
 * Applies the documented review to the draft: each key it names replaces the draft's value, a
 * list's items by their place (`tools: [{...}]` is the first tool's decisions).
 */
function review(dir: string, decisions: Record<string, unknown>) {
  const path = join(dir, "catalog", "warehouse.yaml");
  const document = YAML.parseDocument(readFileSync(path, "utf8"));
  const set = (at: (string | number)[], value: unknown) => {
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) set([...at, index], item);
    } else if (value !== null && typeof value === "object") {
      for (const [key, inner] of Object.entries(value)) set([...at, key], inner);
    } else document.setIn(at, value);
  };
  set([], decisions);
  writeFileSync(path, document.toString({ lineWidth: 100 }));
}

describe("the documented path: put your own API behind the proxy", () => {
  const { file, blocks } = documentedSection(TITLE);
  const background: ChildProcess[] = [];
  let dir = "";
  const outputs: string[] = [];

  beforeAll(async () => {
    dir = cloneProject();
    proxyPort = await freePort();
    examplePort = await freePort();
    // The example's OpenAPI document names the server's address, which the importer drafts from.
    const openapi = join(dir, "examples", "warehouse", "openapi.yaml");
    writeFileSync(openapi, onOurPorts(readFileSync(openapi, "utf8")));
  });

  afterAll(() => {
    stopAll(background);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("is reached from README.md, which links to the page holding the steps", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const targets = links(readme).map((link) => link.target.split("#")[0]);
    expect(file === "README.md" || targets.includes(file.split(sep).join("/"))).toBe(true);
  });

  it("has the steps the test follows: shell blocks, one review, two long-running commands", () => {
    expect(blocks.filter((block) => block.lang === "yaml")).toHaveLength(1);
    const commands = blocks.flatMap((block) => (block.lang === "sh" ? block.text.trim().split("\n") : []));
    expect(commands.filter((line) => LONG_RUNNING.test(line.trim()))).toHaveLength(2);
  });

  it("imports, reviews, enables, checks, starts and calls the tool through the proxy", async () => {
    for (const block of blocks) {
      if (block.lang === "yaml") {
        review(dir, YAML.parse(block.text) as Record<string, unknown>);
        continue;
      }
      const lines = onOurPorts(block.text).trim().split("\n");
      if (lines.every((line) => LONG_RUNNING.test(line.trim()))) {
        for (const line of lines) {
          const child = spawn("bash", ["-c", `exec ${line}`], {
            cwd: dir,
            env: { ...offlineEnv, PORT: line.startsWith("npm") ? String(proxyPort) : String(examplePort) },
            stdio: "ignore",
            detached: true,
          });
          background.push(child);
        }
        await ready(`http://127.0.0.1:${examplePort}/_seen`, 10_000);
        await ready(`http://127.0.0.1:${proxyPort}/healthz`, 90_000);
        continue;
      }
      outputs.push(runIn(dir, onOurPorts(block.text), { PORT: String(proxyPort) }));
    }

    // The draft was refused before the review and is accepted after it; the check compiled it.
    const compiled = readFileSync(join(dir, "src", "generated", "catalog.ts"), "utf8");
    expect(compiled).toContain('"get_stock_level"');
    const wrangler = readFileSync(join(dir, "wrangler.toml"), "utf8");
    expect(wrangler).toMatch(/\[env\.sandbox\.vars\.TENANTS\.acme\]\nnamespaces = \[[^\]]*"warehouse"\]/);
    expect(wrangler).toMatch(/\[env\.production\.vars\.TENANTS\.acme\]\nnamespaces = \[[^\]]*"warehouse"\]/);

    const envelope = JSON.parse(outputs.at(-1) ?? "{}");
    expect(envelope).toMatchObject({
      outcome: "success",
      tool: "get_stock_level",
      environment: "sandbox",
      data: { sku: "W-1001", on_hand: 42, reserved: 5, available: 37, location: "A3-12" },
    });
    // The API key came from .dev.vars through the declared static header, never from the catalog.
    const seen = (await (await fetch(`http://127.0.0.1:${examplePort}/_seen`)).json()) as Array<{
      path: string;
      api_key: boolean;
    }>;
    expect(seen).toContainEqual({ method: "GET", path: "/v1/skus/W-1001/stock", api_key: true });
  });

  it("refuses the model's mistakes on the imported tool as on any other", async () => {
    const opened = await fetch(`http://127.0.0.1:${proxyPort}/v1/runs`, {
      method: "POST",
      headers: { authorization: "Bearer acme-demo-key", "content-type": "application/json" },
      body: JSON.stringify({ namespace: "warehouse" }),
    });
    const { data } = (await opened.json()) as { data: { run_id: string; run_token: string } };
    const call = (tool: string, args: unknown) =>
      fetch(`http://127.0.0.1:${proxyPort}/v1/runs/${data.run_id}/calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${data.run_token}`, "content-type": "application/json" },
        body: JSON.stringify({ tool, args }),
      });
    const mistyped = await call("get_stock_level", { sku: "1001" });
    expect(mistyped.status).toBe(422);
    const refusal = (await mistyped.json()) as { error: { problems: Array<{ field: string }> } };
    expect(refusal.error.problems[0]?.field).toBe("sku");
    const unknown = await call("get_stock_levels", { sku: "W-1001" });
    expect(JSON.stringify(await unknown.json())).toContain("get_stock_level");
  });
});
