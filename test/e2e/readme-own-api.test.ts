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
import { fillMarkers, reviewText } from "../fixtures/postcodes-review";
import { startPostcodesUpstream } from "../fixtures/postcodes-upstream.mjs";
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

/**
 * A vendor's document that passes its credentials as parameters (`api_key` in the query, a secret
 * `user_token` header) and answers with `oneOf` results, written for the importer's tests; its API is
 * served by test/fixtures/postcodes-upstream.mjs on a free port, wanting these values, which the
 * steps write to .dev.vars as a newcomer would.
 */
const VENDOR_DOCUMENT = "test/unit/fixtures/openapi/postcodes.yaml";
const VENDOR_SECRETS = { apiKey: "pc-key-7f3a91", userToken: "pc-token-c2e804" };

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

const background: ChildProcess[] = [];
let dir = "";
let vendor: Awaited<ReturnType<typeof startPostcodesUpstream>>;

beforeAll(async () => {
  dir = cloneProject();
  proxyPort = await freePort();
  examplePort = await freePort();
  // The example's OpenAPI document names the server's address, which the importer drafts from.
  const openapi = join(dir, "examples", "warehouse", "openapi.yaml");
  writeFileSync(openapi, onOurPorts(readFileSync(openapi, "utf8")));
  vendor = await startPostcodesUpstream(VENDOR_SECRETS);
});

afterAll(async () => {
  stopAll(background);
  await vendor?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the same steps on a vendor's document that passes its credentials as parameters", () => {
  it("imports it, takes a review of the markers alone, enables it and checks it", () => {
    // The document names the vendor's sandbox server, which the importer drafts the base from.
    const document = join(dir, VENDOR_DOCUMENT);
    writeFileSync(document, readFileSync(document, "utf8").replace("http://127.0.0.1:8799/v2", vendor.url));
    runIn(dir, `npm run tools -- import openapi ${VENDOR_DOCUMENT} --namespace postcodes`);
    const file = join(dir, "catalog", "postcodes.yaml");
    const drafted = readFileSync(file, "utf8");
    expect(() => runIn(dir, "npm run tools -- check")).toThrow(/postcodes\.yaml: .*left for review/);

    // The reviewer edits the marked values and nothing else: every comment and every other value
    // stays as drafted.
    const { text, changed } = reviewText(drafted);
    writeFileSync(file, text);
    expect(changed).toContain("upstreams.POSTCODES_API.credential.kind");
    expect(YAML.parse(text)).toEqual(fillMarkers(YAML.parse(drafted)));
    for (const comment of drafted.split("\n").filter((line) => line.trim().startsWith("#"))) {
      expect(text).toContain(comment);
    }

    runIn(dir, "npm run tools -- enable postcodes --tenant acme");
    runIn(
      dir,
      `echo 'POSTCODES_API_KEY=${VENDOR_SECRETS.apiKey}' >> .dev.vars && echo 'POSTCODES_USER_TOKEN_API_KEY=${VENDOR_SECRETS.userToken}' >> .dev.vars`,
    );
    runIn(dir, "npm run tools -- check");
    const compiled = readFileSync(join(dir, "src", "generated", "catalog.ts"), "utf8");
    for (const name of ["get_postcode", "list_postcodes", "get_udprn"])
      expect(compiled).toContain(`"${name}"`);
  });
});

describe("the documented path: put your own API behind the proxy", () => {
  const { file, blocks } = documentedSection(TITLE);
  const outputs: string[] = [];

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

describe("the vendor's tools through the running proxy", () => {
  const base = () => `http://127.0.0.1:${proxyPort}`;
  let run: { run_id: string; run_token: string };
  const secrets = Object.values(VENDOR_SECRETS);
  const call = async (tool: string, args: unknown) => {
    const response = await fetch(`${base()}/v1/runs/${run.run_id}/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.run_token}`, "content-type": "application/json" },
      body: JSON.stringify({ tool, args }),
    });
    const text = await response.text();
    for (const secret of secrets) expect(text).not.toContain(secret);
    return JSON.parse(text) as { outcome: string; data: unknown; error: unknown };
  };

  beforeAll(async () => {
    const opened = await fetch(`${base()}/v1/runs`, {
      method: "POST",
      headers: { authorization: "Bearer acme-demo-key", "content-type": "application/json" },
      body: JSON.stringify({ namespace: "postcodes" }),
    });
    const text = await opened.text();
    expect(opened.status, text).toBe(201);
    for (const secret of secrets) expect(text).not.toContain(secret);
    run = (JSON.parse(text) as { data: typeof run }).data;
  });

  it("lists each tool without its credential among the inputs the model fills", async () => {
    for (const format of ["jsonschema", "anthropic", "openai", "mcp"]) {
      const listed = await fetch(`${base()}/v1/tools?namespace=postcodes&format=${format}`, {
        headers: { authorization: `Bearer ${run.run_token}` },
      });
      const text = await listed.text();
      expect(listed.status, text).toBe(200);
      expect(text).toContain("get_udprn");
      for (const secret of secrets) expect(text).not.toContain(secret);
      // Neither credential's name is an input (nor anywhere else) the model sees.
      expect(text).not.toMatch(/api_key|user_token/);
    }
  });

  it("answers every variant of a oneOf result, the credential sent where the API reads it", async () => {
    const before = vendor.requests.length;
    expect(await call("get_postcode", { postcode: "SW1A 1AA" })).toMatchObject({
      outcome: "success",
      data: {
        code: 2000,
        result: {
          match: "exact",
          address: { udprn: 23747771, postcode: "SW1A 1AA", line_1: "Buckingham Palace" },
        },
      },
    });
    expect(await call("get_postcode", { postcode: "EC1A" })).toMatchObject({
      outcome: "success",
      data: { result: { match: "partial", suggestions: ["EC1A 1BB"] } },
    });
    expect(await call("list_postcodes", { q: "SW1A" })).toMatchObject({
      outcome: "success",
      data: { result: [{ postcode: "SW1A 1AA" }, { postcode: "SW1A 2AA" }] },
    });
    expect(await call("list_postcodes", { q: "ZZ9" })).toMatchObject({
      outcome: "success",
      data: { result: null },
    });
    expect(await call("get_udprn", { udprn: 23747772 })).toMatchObject({
      outcome: "success",
      data: { result: { udprn: 23747772, line_1: "10 Downing Street" } },
    });
    expect(await call("get_udprn", { udprn: 50000000 })).toMatchObject({
      outcome: "success",
      data: { result: [{ line_1: "1 Long Lane, Flat 1" }, { line_1: "1 Long Lane, Flat 2" }] },
    });

    // The vendor saw each credential in its declared place, and in no other.
    const seen = vendor.requests.slice(before);
    expect(seen.map((request) => request.path)).toEqual([
      "/v2/postcodes/SW1A%201AA",
      "/v2/postcodes/EC1A",
      "/v2/postcodes",
      "/v2/postcodes",
      "/v2/udprn/23747772",
      "/v2/udprn/50000000",
    ]);
    for (const request of seen) {
      const query = new URLSearchParams(request.query);
      const headerValues = Object.values(request.headers).flat().join("\n");
      if (request.path.startsWith("/v2/postcodes")) {
        expect(query.get("api_key")).toBe(VENDOR_SECRETS.apiKey);
        expect(headerValues).not.toContain(VENDOR_SECRETS.apiKey);
      } else {
        expect(request.headers.user_token).toBe(VENDOR_SECRETS.userToken);
        expect(request.query).not.toContain(VENDOR_SECRETS.userToken);
      }
      // Never the proxy's own JWT in a declared credential's place, nor the other credential.
      expect(request.headers.authorization).toBeUndefined();
      expect(`${request.query}\n${headerValues}`).not.toContain(
        request.path.startsWith("/v2/postcodes") ? VENDOR_SECRETS.userToken : VENDOR_SECRETS.apiKey,
      );
    }
  });

  it("keeps both credentials out of the run's trace, in every export", async () => {
    const headers = { authorization: `Bearer ${run.run_token}` };
    const page = await fetch(`${base()}/v1/runs/${run.run_id}/trace?limit=100`, { headers });
    const trace = await page.text();
    expect(page.status, trace).toBe(200);
    const entries = (JSON.parse(trace) as { data: { entries: Array<{ tool: string; outcome: string }> } })
      .data.entries;
    expect(entries.map((entry) => [entry.tool, entry.outcome])).toEqual([
      ["get_postcode", "success"],
      ["get_postcode", "success"],
      ["list_postcodes", "success"],
      ["list_postcodes", "success"],
      ["get_udprn", "success"],
      ["get_udprn", "success"],
    ]);
    const ndjson = await (
      await fetch(`${base()}/v1/runs/${run.run_id}/trace`, {
        headers: { ...headers, accept: "application/x-ndjson" },
      })
    ).text();
    const otlp = await (await fetch(`${base()}/v1/runs/${run.run_id}/trace?format=otlp`, { headers })).text();
    for (const text of [trace, ndjson, otlp]) {
      for (const secret of secrets) expect(text).not.toContain(secret);
      expect(text).not.toMatch(/api_key|user_token/);
    }
  });
});
