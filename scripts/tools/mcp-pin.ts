// `npm run tools -- pin <ns> [tool] [--url <url>] [--header ...]` and
// `npm run tools -- check --remote [--namespace <ns>] [--url <url>] [--header ...]`: the declared remote tools (listed at
// the upstream's base.sandbox unless --url; production only when --url names it) against
// what their server lists now. `check --remote` only reports; `pin` records a changed definition
// as the reviewed one (pins file) and its digest as the declaration's `pin`, comments kept.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseDocument } from "yaml";
import { compareRemote, type DeclaredRemote, verdictLines } from "./mcp-drift";
import { pinDigest, pinnedDefinition, readPins, writePins } from "./mcp-pins";
import { connectionOptions, listRemoteTools, parseHeaders, RemoteError } from "./mcp-remote";

interface RemoteUpstream {
  binding: string;
  url: string | null;
  tools: (DeclaredRemote & { index: number })[];
}

interface Namespace {
  namespace: string;
  file: string;
  upstreams: RemoteUpstream[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The namespaces of a catalog directory that declare an mcp upstream, with their remote tools. */
function remoteNamespaces(catalogDir: string): Namespace[] {
  const files = existsSync(catalogDir)
    ? readdirSync(catalogDir)
        .filter((name) => name.endsWith(".yaml"))
        .sort()
    : [];
  return files.flatMap((name): Namespace[] => {
    const raw: unknown = parseDocument(readFileSync(join(catalogDir, name), "utf8"), { merge: true }).toJS();
    if (!isRecord(raw) || !isRecord(raw.upstreams)) return [];
    const tools = Array.isArray(raw.tools) ? raw.tools : [];
    const upstreams = Object.entries(raw.upstreams)
      .filter(([, upstream]) => isRecord(upstream) && upstream.kind === "mcp")
      .map(([binding, upstream]): RemoteUpstream => {
        const { base, path } = upstream as {
          base?: { sandbox?: string; production?: string };
          path?: string;
        };
        // The sandbox's server only: a check never reaches production unless --url names it.
        const origin = base?.sandbox;
        return {
          binding,
          url: origin ? `${origin.replace(/\/+$/, "")}${path ?? "/mcp"}` : null,
          tools: tools.flatMap((tool: unknown, index) => {
            const request = isRecord(tool) && isRecord(tool.request) ? tool.request : {};
            if (request.upstream !== binding || typeof request.tool !== "string") return [];
            const ours = isRecord(tool) ? String(tool.name) : request.tool;
            return [{ index, name: ours, remote: request.tool, pin: String(request.pin ?? "") }];
          }),
        };
      });
    return upstreams.length > 0 ? [{ namespace: name.slice(0, -".yaml".length), file: name, upstreams }] : [];
  });
}

async function liveTools(upstream: RemoteUpstream, url: string | null, headers: Record<string, string>) {
  const target = url ?? upstream.url;
  if (!target) {
    throw new RemoteError(
      `${upstream.binding} has no base URL (it is bound by name in wrangler.toml): give --url <its MCP endpoint>`,
    );
  }
  return { url: target, tools: await listRemoteTools(target, headers) };
}

/**
 * Every mcp upstream's declared tools against the live listing. Returns whether all are unchanged;
 * a server out of reach counts as a failure, reported with the URL tried. An upstream with no URL to
 * list it at (no `base.sandbox`: bound by name in wrangler.toml, as the sandbox's helpdesk is a
 * service of the local stack) and no `--url` is skipped, saying so: there is nothing the command
 * could reach, and the proxy still checks its pins at every call (`upstream_changed`).
 */
export async function checkRemote(
  catalogDir: string,
  args: readonly string[],
  print: (line: string) => void = console.log,
): Promise<boolean> {
  const { url, headers, rest } = connectionOptions(args);
  const only = rest[0] === "--namespace" ? (rest[1] ?? null) : null;
  let ok = true;
  const namespaces = remoteNamespaces(catalogDir).filter(
    ({ namespace }) => only === null || namespace === only,
  );
  if (namespaces.length === 0) print("check --remote: no catalog file declares an mcp upstream");
  for (const namespace of namespaces) {
    const reviewed = readPins(catalogDir, namespace.namespace) ?? {};
    for (const upstream of namespace.upstreams) {
      if (url === null && upstream.url === null) {
        print(
          `${namespace.file}: ${upstream.binding}: skipped: no URL to list it at (no base.sandbox: it is bound by name in wrangler.toml); the proxy checks its pins at every call, and --url <its MCP endpoint> checks it from here`,
        );
        continue;
      }
      try {
        const live = await liveTools(upstream, url, parseHeaders(headers));
        print(`${namespace.file}: ${upstream.binding} at ${live.url}: ${live.tools.length} tools listed`);
        const comparison = compareRemote(upstream.tools, reviewed, live.tools);
        for (const line of verdictLines(comparison)) print(line);
        if (comparison.verdicts.some((verdict) => verdict.kind !== "unchanged")) ok = false;
      } catch (error) {
        if (!(error instanceof RemoteError)) throw error;
        print(`${namespace.file}: ${upstream.binding}: ${error.message}`);
        ok = false;
      }
    }
  }
  return ok;
}

/**
 * The command `pin`: re-pins each declared remote tool of the namespace (or the one named, by our
 * name or the server's) whose live definition differs from the reviewed one. A tool the server no
 * longer lists is reported and left as it is. Returns the exit code.
 */
export async function runPin(
  catalogDir: string,
  args: readonly string[],
  print: (line: string) => void = console.log,
): Promise<number> {
  const { url, headers, rest } = connectionOptions(args);
  const [name, only, ...extra] = rest;
  const fail = (message: string) => {
    console.error(`pin: ${message}`);
    return 1;
  };
  if (!name || name.startsWith("--") || extra.length > 0 || only?.startsWith("--")) {
    return fail('usage: npm run tools -- pin <ns> [tool] [--url <url>] [--header "Name: value"]...');
  }
  const namespace = remoteNamespaces(catalogDir).find((candidate) => candidate.namespace === name);
  if (!namespace) return fail(`no catalog file ${name}.yaml with an mcp upstream in ${catalogDir}`);
  const declared = namespace.upstreams.flatMap((upstream) => upstream.tools);
  if (only && !declared.some((tool) => tool.name === only || tool.remote === only)) {
    return fail(
      `${name}.yaml declares no remote tool ${only}; it declares ${declared.map((t) => t.name).join(", ")}`,
    );
  }
  const path = join(catalogDir, namespace.file);
  const document = parseDocument(readFileSync(path, "utf8"));
  const pins = readPins(catalogDir, name) ?? {};
  let exitCode = 0;
  let repinned = 0;
  for (const upstream of namespace.upstreams) {
    const tools = upstream.tools.filter((tool) => !only || tool.name === only || tool.remote === only);
    if (tools.length === 0) continue;
    let live: Awaited<ReturnType<typeof liveTools>>;
    try {
      live = await liveTools(upstream, url, parseHeaders(headers));
    } catch (error) {
      if (!(error instanceof RemoteError)) throw error;
      return fail(error.message);
    }
    const { verdicts } = compareRemote(tools, pins, live.tools);
    for (const verdict of verdicts) {
      const tool = tools.find((candidate) => candidate === verdict.tool);
      const listed = live.tools.find((candidate) => candidate.name === tool?.remote);
      if (!tool) continue;
      const reviewed = pins[tool.remote];
      if (verdict.kind === "vanished" || !listed) {
        print(`${tool.name}: vanished: the server no longer lists ${tool.remote}; not re-pinned`);
        exitCode = 1;
      } else if (verdict.kind === "unchanged" && reviewed && pinDigest(reviewed) === tool.pin) {
        print(`${tool.name}: unchanged`);
      } else {
        const definition = pinnedDefinition(listed);
        const pin = pinDigest(definition);
        print(`${tool.name}: re-pinned to ${pin}`);
        if (verdict.kind === "changed") for (const change of verdict.changes) print(`    ${change}`);
        pins[tool.remote] = definition;
        document.setIn(["tools", tool.index, "request", "pin"], pin);
        repinned++;
      }
    }
  }
  if (repinned > 0) {
    writeFileSync(path, document.toString({ lineWidth: 100 }));
    writePins(catalogDir, name, pins);
    print(
      `wrote ${relative(process.cwd(), path) || path} and ${name}.pins.json; review the changes before you commit them`,
    );
  }
  return exitCode;
}
