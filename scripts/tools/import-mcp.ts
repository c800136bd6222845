// `npm run tools -- import mcp <url> --namespace <ns> [--header "Name: value"]... [--tools a,b]
//                  [--force] [--catalog-dir <dir>]`
//
// Connects once to a remote MCP server, lists its tools and drafts catalog/<ns>.yaml, each tool
// pinned to the definition listed, which catalog/<ns>.pins.json records for review. As with the
// OpenAPI importer, `check` refuses the draft until a human has decided what the markers leave open.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { DraftError, draftRemoteNamespace, type RemoteDraft } from "./mcp-draft";
import { pinsFileOf, pinsText } from "./mcp-pins";
import { connectionOptions, listRemoteTools, parseHeaders, RemoteError } from "./mcp-remote";
import { proxyOriginsOfProject } from "./upstream-hosts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const USAGE =
  'usage: npm run tools -- import mcp <url> --namespace <ns> [--header "Name: value"]... [--tools a,b] [--force] [--catalog-dir <dir>]';

class UsageError extends Error {}

/** The draft's YAML: the declaration with its header, the upstream's note and each tool's source. */
export function remoteDraftYaml(draft: RemoteDraft, url: string): string {
  const doc = new YAML.Document(draft.declaration, { aliasDuplicateObjects: false });
  doc.commentBefore = [
    " yaml-language-server: $schema=./schema.json",
    ` Drafted from the MCP server at ${url}, by npm run tools -- import mcp.`,
    ` Each tool is pinned to the definition the server listed, recorded in ${draft.declaration.namespace}.pins.json:`,
    " review that file too. A changed definition is refused at run time until `npm run tools -- pin`.",
    " `npm run tools -- check` refuses this file until every draft marker is replaced by a decision:",
    "   side_effect: { draft: ..., why: ... }  ->  read | draft | write | destructive",
    "   every 'TODO(review): ...' string       ->  the real text (or true/false); a trusted_text",
    "                                              field that third parties can write moves to untrusted",
  ].join("\n");
  const bindingKey = (doc.get("upstreams", true) as YAML.YAMLMap | undefined)?.items[0]?.key;
  if (YAML.isNode(bindingKey)) bindingKey.commentBefore = draft.upstreamComment;
  const toolNodes = (doc.get("tools", true) as YAML.YAMLSeq | undefined)?.items ?? [];
  for (const [index, node] of toolNodes.entries()) {
    const tool = draft.tools[index];
    if (tool && YAML.isNode(node)) node.commentBefore = ` from the server's tool ${tool.remote}`;
  }
  return doc.toString({ lineWidth: 100 });
}

function parseArgs(args: readonly string[]) {
  const { url: _url, headers, rest } = connectionOptions(args[0] === "mcp" ? args.slice(1) : args);
  const options = {
    url: null as string | null,
    namespace: null as string | null,
    only: null as string[] | null,
    force: false,
    catalogDir: join(ROOT, "catalog"),
    headers,
  };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? "";
    if (arg === "--force") options.force = true;
    else if (arg === "--namespace") options.namespace = rest[++i] ?? null;
    else if (arg === "--tools") {
      options.only = (rest[++i] ?? "")
        .split(",")
        .map((name) => name.trim())
        .filter(Boolean);
    } else if (arg === "--catalog-dir") options.catalogDir = rest[++i] ?? options.catalogDir;
    else if (arg.startsWith("--")) throw new UsageError(`unknown option ${arg}\n${USAGE}`);
    else if (options.url === null) options.url = arg;
    else throw new UsageError(`one server at a time (got ${options.url} and ${arg})\n${USAGE}`);
  }
  if (!options.url || !options.namespace) throw new UsageError(USAGE);
  return { ...options, url: options.url, namespace: options.namespace };
}

/**
 * The command: lists the server's tools, drafts, writes catalog/<ns>.yaml and its pins file (never
 * over an existing file without --force) and prints what needs review. Returns the exit code.
 */
export async function runImportMcp(args: readonly string[]): Promise<number> {
  try {
    const options = parseArgs(args);
    const headers = parseHeaders(options.headers);
    const target = join(options.catalogDir, `${options.namespace}.yaml`);
    const shown = relative(process.cwd(), target) || target;
    if (existsSync(target) && !options.force) {
      throw new UsageError(`${shown} exists; pass --force to overwrite it`);
    }
    const listed = await listRemoteTools(options.url, headers);
    const own = await proxyOriginsOfProject(ROOT);
    const draft = draftRemoteNamespace(listed, { ...options, headers, own });
    if (draft.tools.length === 0) {
      printProblems(draft);
      throw new UsageError(`${options.url}: no tool could be drafted; nothing written`);
    }
    mkdirSync(options.catalogDir, { recursive: true });
    writeFileSync(target, remoteDraftYaml(draft, options.url));
    writeFileSync(pinsFileOf(options.catalogDir, options.namespace), pinsText(draft.pins));
    printSummary(shown, draft);
    return 0;
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof RemoteError || error instanceof DraftError)) {
      throw error;
    }
    console.error(`import mcp: ${error.message}`);
    return 1;
  }
}

function printSummary(shown: string, draft: RemoteDraft): void {
  const width = Math.max(...draft.tools.map((tool) => tool.name.length));
  const count = draft.tools.length;
  console.log(`wrote ${shown} and its pins: ${count} tool${count === 1 ? "" : "s"}`);
  for (const tool of draft.tools) {
    console.log(`  ${tool.name.padEnd(width)}  from ${tool.remote} (proposed ${tool.sideEffect})`);
  }
  console.log("\nneeds review before `npm run tools -- check` accepts it:");
  for (const tool of draft.tools) console.log(`  ${tool.name}: ${tool.review.join(", ")}`);
  for (const note of draft.notes) console.log(`  ${note}`);
  printProblems(draft);
}

function printProblems({ problems }: RemoteDraft): void {
  if (problems.length === 0) return;
  console.log(`\nnot supported (${problems.length}):`);
  for (const problem of problems) console.log(`  ${problem.location}: ${problem.message}`);
}
