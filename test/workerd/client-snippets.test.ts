import { describe, expect, it } from "vitest";
import mcpPage from "../../docs/mcp.md?raw";
import { section } from "../../scripts/readme/markdown";
import { catalog } from "../../src/tools";
import { workerFetch } from "./mcp-client";

/**
 * The client snippets of "Connecting a client" (docs/mcp.md), read from the page itself so that
 * what a reader copies is what is tested: the JSON configurations are parsed and used to open a
 * session, and the curl session is replayed request by request against the worker.
 */

const MCP_URL = "http://127.0.0.1:8787/mcp";
const AGENT_HEADER = { Authorization: "Bearer acme-agent-key" };

/** The section's text, from its heading to the next heading of the same or a higher level. */
function sectionOf(markdown: string, title: string): string {
  const text = section(markdown, title);
  if (text === undefined) throw new Error(`docs/mcp.md has no "${title}" section`);
  return text;
}

interface CodeBlock {
  lang: string;
  code: string;
}

function codeBlocks(markdown: string): CodeBlock[] {
  return [...markdown.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((match) => ({
    lang: match[1] ?? "",
    code: match[2] ?? "",
  }));
}

const snippets = codeBlocks(sectionOf(mcpPage, "Connecting a client"));

type JsonObject = { [key: string]: unknown };

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The one server entry of an `mcpServers` configuration. */
function serverEntry(config: unknown): JsonObject {
  if (!isObject(config) || !isObject(config.mcpServers)) throw new Error("no mcpServers object");
  const entries = Object.values(config.mcpServers);
  expect(entries).toHaveLength(1);
  const [entry] = entries;
  if (!isObject(entry)) throw new Error("the server entry is not an object");
  return entry;
}

/** The JSON configuration whose server entry has `key` (`command` for Claude Desktop, `url` for Cursor). */
function jsonConfig(key: "command" | "url"): JsonObject {
  const found = snippets
    .filter((block) => block.lang === "json")
    .map((block) => serverEntry(JSON.parse(block.code)))
    .filter((entry) => key in entry);
  expect(found, `one JSON configuration with "${key}"`).toHaveLength(1);
  return found[0] as JsonObject;
}

/**
 * What `mcp-remote` makes of its arguments: the first one after the package is the server URL, each
 * `--header Name:value` a header (split at the first colon, spaces after it dropped), and `${VAR}`
 * in a value is read from the server entry's `env`.
 */
function mcpRemoteTarget(entry: JsonObject): { url: string; headers: Record<string, string> } {
  const args = entry.args as string[];
  const env = (entry.env ?? {}) as Record<string, string>;
  const bridge = args.findIndex((arg) => arg === "mcp-remote" || arg.startsWith("mcp-remote@"));
  expect(bridge, "mcp-remote is in args").toBeGreaterThanOrEqual(0);
  const headers: Record<string, string> = {};
  const rest = args.slice(bridge + 1);
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] !== "--header") continue;
    const match = /^([A-Za-z0-9_-]+):\s*(.*)$/.exec(rest[i + 1] ?? "");
    if (!match?.[1]) throw new Error(`invalid --header ${rest[i + 1]}`);
    headers[match[1]] = (match[2] ?? "").replace(/\$\{([^}]+)\}/g, (_, name: string) => env[name] ?? "");
  }
  return { url: rest[0] ?? "", headers };
}

/** One HTTP request of the curl session as the page writes it. */
interface CurlRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** The file `-D` dumps the answer's headers to, if any. */
  dumpHeaders: string | undefined;
}

/** A shell line of the session: a curl request, or a variable read from a dumped header. */
type Step = { kind: "curl"; request: CurlRequest } | { kind: "read"; variable: string; header: string };

/**
 * Splits one shell command into words: single quotes are literal, double quotes expand `$VAR`
 * from `vars`; enough shell for the page's commands, which use nothing else.
 */
function shellWords(line: string, vars: Record<string, string>): string[] {
  const words: string[] = [];
  const pattern = /'([^']*)'|"([^"]*)"|(\S+)/g;
  for (const match of line.matchAll(pattern)) {
    if (match[1] !== undefined) words.push(match[1]);
    else if (match[2] !== undefined)
      words.push(match[2].replace(/\$(\w+)/g, (_, name: string) => vars[name] ?? ""));
    else if (match[3] !== undefined) words.push(match[3]);
  }
  return words;
}

function parseCurl(words: string[]): CurlRequest {
  const request: CurlRequest = { method: "", url: "", headers: {}, body: undefined, dumpHeaders: undefined };
  for (let i = 1; i < words.length; i++) {
    const word = words[i] ?? "";
    const next = () => {
      i += 1;
      return words[i] ?? "";
    };
    if (word === "-s") continue;
    if (word === "-X") request.method = next();
    else if (word === "-D") request.dumpHeaders = next();
    else if (word === "-d") request.body = next();
    else if (word === "-H") {
      const header = next();
      const colon = header.indexOf(":");
      request.headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
    } else if (/^https?:\/\//.test(word)) request.url = word;
    else throw new Error(`the test does not know the curl option ${word}`);
  }
  // curl's default: POST when there is a body, GET otherwise.
  request.method ||= request.body === undefined ? "GET" : "POST";
  return request;
}

/**
 * The curl session's steps, parsed once the variables they use are known: a command is only
 * turned into words when it runs, so `$SESSION` is the value read from the previous answer.
 */
function curlSession(): string[] {
  const blocks = snippets.filter((block) => block.lang === "sh" && block.code.includes('"initialize"'));
  expect(blocks, "one sh block with the curl session").toHaveLength(1);
  return (blocks[0]?.code ?? "")
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

function stepOf(line: string, vars: Record<string, string>): Step {
  const read = /^(\w+)=\$\(grep -i '\^([A-Za-z0-9-]+):' (\S+) /.exec(line);
  if (read?.[1] && read[2]) return { kind: "read", variable: read[1], header: read[2] };
  const words = shellWords(line, vars);
  if (words[0] !== "curl") throw new Error(`unexpected line in the curl session: ${line}`);
  return { kind: "curl", request: parseCurl(words) };
}

const send = (request: Pick<CurlRequest, "method" | "url" | "headers" | "body">) =>
  workerFetch(request.url, {
    method: request.method,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  });

const initializeBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "1.0.0" } },
});

/** Opens a session the way a client configured with `url` and `headers` does, then ends it. */
async function openAndEndSession(url: string, headers: Record<string, string>): Promise<void> {
  const json = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
  const opened = await send({ method: "POST", url, headers: { ...headers, ...json }, body: initializeBody });
  expect(opened.status, await opened.clone().text()).toBe(200);
  const sessionId = opened.headers.get("mcp-session-id");
  expect(sessionId).toEqual(expect.any(String));
  const ended = await send({
    method: "DELETE",
    url,
    headers: { ...headers, "Mcp-Session-Id": sessionId ?? "" },
    body: undefined,
  });
  expect(ended.status).toBe(200);
}

describe("docs/mcp.md: connecting a client", () => {
  it("Claude Desktop runs mcp-remote against /mcp with the agent key in a header filled from env", () => {
    const entry = jsonConfig("command");
    expect(entry.command).toBe("npx");
    const target = mcpRemoteTarget(entry);
    expect(target.url).toBe(MCP_URL);
    expect(target.headers).toEqual(AGENT_HEADER);
    // No space inside any argument: Claude Desktop on Windows would split it.
    for (const arg of entry.args as string[]) expect(arg).not.toContain(" ");
  });

  it("Cursor connects to /mcp by URL with the agent key header", () => {
    const entry = jsonConfig("url");
    expect(entry).toEqual({ url: MCP_URL, headers: AGENT_HEADER });
  });

  it("the Claude Code, OpenAI Agents SDK and AI SDK snippets name the same URL and key", () => {
    const claudeCode = snippets.find((block) => block.code.startsWith("claude mcp add"));
    expect(claudeCode?.code).toContain(`--transport http edge-proxy ${MCP_URL}`);
    expect(claudeCode?.code).toContain('--header "Authorization: Bearer acme-agent-key"');

    const agents = snippets.find((block) => block.code.includes("MCPServerStreamableHttp"));
    expect(agents?.lang).toBe("ts");
    expect(agents?.code).toContain(`url: "${MCP_URL}"`);
    expect(agents?.code).toContain('requestInit: { headers: { Authorization: "Bearer acme-agent-key" } }');

    const aiSdk = snippets.find((block) => block.code.includes("createMCPClient"));
    expect(aiSdk?.lang).toBe("ts");
    expect(aiSdk?.code).toMatch(/type: "http",\s+url: "http:\/\/127\.0\.0\.1:8787\/mcp",/);
    expect(aiSdk?.code).toContain('headers: { Authorization: "Bearer acme-agent-key" }');
  });

  it.each([
    ["Claude Desktop", () => mcpRemoteTarget(jsonConfig("command"))],
    ["Cursor", () => jsonConfig("url") as { url: string; headers: Record<string, string> }],
  ])("the %s configuration opens and ends an MCP session with the worker", async (_client, target) => {
    const { url, headers } = target();
    await openAndEndSession(url, headers);
  });

  it("replays the curl session: initialize, session id, initialized, tools/list, tools/call, DELETE", async () => {
    const vars: Record<string, string> = {};
    let lastHeaders: Headers | undefined;
    const seen: string[] = [];
    let ended: CurlRequest | undefined;

    for (const line of curlSession()) {
      const step = stepOf(line, vars);
      if (step.kind === "read") {
        const value = lastHeaders?.get(step.header);
        expect(value, `the ${step.header} header of the previous answer`).toEqual(expect.any(String));
        vars[step.variable] = value ?? "";
        seen.push(`read ${step.variable}`);
        continue;
      }
      const { request } = step;
      expect(request.url).toBe(MCP_URL);
      expect(request.headers.Authorization).toBe(AGENT_HEADER.Authorization);
      const response = await send(request);
      if (request.dumpHeaders) lastHeaders = response.headers;
      const text = await response.text();

      if (request.method === "DELETE") {
        expect(request.headers["Mcp-Session-Id"]).toBe(vars.SESSION);
        expect(response.status, text).toBe(200);
        seen.push("DELETE");
        ended = request;
        continue;
      }
      const message = JSON.parse(request.body ?? "null") as { method: string; id?: number };
      seen.push(message.method);
      if (message.method !== "initialize") {
        expect(request.headers["Mcp-Session-Id"], "later requests send the session id").toBe(vars.SESSION);
      }
      switch (message.method) {
        case "initialize": {
          expect(response.status, text).toBe(200);
          expect(response.headers.get("mcp-session-id")).toEqual(expect.any(String));
          expect(JSON.parse(text)).toMatchObject({
            jsonrpc: "2.0",
            id: message.id,
            result: { protocolVersion: "2025-11-25", serverInfo: { name: expect.any(String) } },
          });
          break;
        }
        case "notifications/initialized":
          expect(response.status, text).toBe(202);
          break;
        case "tools/list": {
          expect(response.status, text).toBe(200);
          const { result } = JSON.parse(text) as { result: { tools: Array<{ name: string }> } };
          expect(result.tools.map((tool) => tool.name)).toEqual(
            catalog.tools("support").map((tool) => tool.name),
          );
          break;
        }
        case "tools/call": {
          expect(response.status, text).toBe(200);
          const answer = JSON.parse(text) as {
            id: number;
            result: { isError?: boolean; structuredContent: { outcome: string; data: unknown } };
          };
          expect(answer.id).toBe(message.id);
          expect(answer.result.isError ?? false).toBe(false);
          expect(answer.result.structuredContent).toMatchObject({
            outcome: "success",
            data: { order_id: "A1001" },
          });
          break;
        }
        default:
          throw new Error(`the test does not expect ${message.method} in the page's session`);
      }
    }

    expect(seen).toEqual([
      "initialize",
      "read SESSION",
      "notifications/initialized",
      "tools/list",
      "tools/call",
      "DELETE",
    ]);
    // The ended session is gone: the same request again is told to initialize anew.
    if (!ended) throw new Error("the session was never ended");
    const after = await send({
      ...ended,
      method: "POST",
      headers: {
        ...ended.headers,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list" }),
    });
    expect(after.status).toBe(404);
  });
});
