// One namespace as `npm run tools -- certify` reads it: the YAML as parsed (what the certification's
// digest covers), each tool as the proxy builds its requests (declaredTool, so a probe sends what a
// call would), with its `certify.args` and its upstream's claim about keys (`idempotency`).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseDocument } from "yaml";
import { type CatalogFile, CatalogFileSchema, type ToolDeclaration } from "../../src/catalog/declaration";
import { declaredTool } from "../../src/catalog/declared-tool";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { CertifyError } from "./certify-reach";
import { formatPath } from "./located";

export type Args = Record<string, unknown>;

export interface CertifyTool {
  declaration: ToolDeclaration;
  /** As the proxy holds it: its request built from arguments, its postcondition's verdict. */
  spec: ToolSpec;
  /** `certify.args`: the arguments a certification sends; null when the tool declares none. */
  args: Args | null;
}

export interface CertifyUpstream {
  name: string;
  declaration: CatalogFile["upstreams"][string];
  /** The header the idempotency key travels in. */
  header: string;
  /** What the declaration claims (`idempotency.honoured`); null when it claims nothing. */
  honoured: boolean | null;
  /** Its tools, in the order declared. */
  tools: CertifyTool[];
}

export interface CertifyNamespace {
  namespace: string;
  /** The file as parsed from YAML, before any default: what `upstreamDigest` covers. */
  raw: { upstreams: Record<string, unknown>; tools: unknown[] };
  /** The upstreams some tool uses, by name. */
  upstreams: CertifyUpstream[];
  tool(name: string): CertifyTool | undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** What an upstream's declaration claims of keys: its header, and `honoured` (null: undecided). */
function idempotencyOf(upstream: CatalogFile["upstreams"][string]): {
  header: string;
  honoured: boolean | null;
} {
  if (upstream.kind === "mcp") return { header: "Idempotency-Key", honoured: upstream.idempotency.honoured };
  return {
    header: upstream.idempotency?.header ?? "Idempotency-Key",
    honoured: upstream.idempotency?.honoured ?? null,
  };
}

/** The schemas are never built: a probe sends declared arguments as they are, as the sandbox takes them. */
const noSchemas = () => {
  throw new Error("certify builds no schema of a tool");
};

/** `<catalogDir>/<namespace>.yaml`, checked against the declaration schema. */
export function loadNamespace(catalogDir: string, namespace: string): CertifyNamespace {
  const path = join(catalogDir, `${namespace}.yaml`);
  if (!existsSync(path)) throw new CertifyError(`no catalog file ${namespace}.yaml in ${catalogDir}`);
  const parsedYaml: unknown = parseDocument(readFileSync(path, "utf8"), { merge: true }).toJS();
  const raw = isRecord(parsedYaml) ? parsedYaml : {};
  const rawTools = Array.isArray(raw.tools) ? raw.tools : [];
  const parsed = CatalogFileSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
    throw new CertifyError(
      `${namespace}.yaml does not check (${problems.slice(0, 3).join("; ")}): run \`npm run tools -- check\``,
    );
  }
  const file = parsed.data;
  const tools = new Map<string, CertifyTool>();
  for (const declaration of file.tools) {
    const spec = declaredTool(file, declaration, noSchemas);
    tools.set(declaration.name, { declaration, spec, args: declaration.certify?.args ?? null });
  }
  const rawUpstreams = isRecord(raw.upstreams) ? raw.upstreams : {};
  const upstreams = Object.keys(file.upstreams)
    .sort()
    .flatMap((name): CertifyUpstream[] => {
      const declaration = file.upstreams[name];
      const own = [...tools.values()].filter((tool) => tool.declaration.request.upstream === name);
      if (!declaration || own.length === 0) return [];
      return [{ name, declaration, ...idempotencyOf(declaration), tools: own }];
    });
  return {
    namespace: file.namespace,
    raw: { upstreams: rawUpstreams, tools: rawTools },
    upstreams,
    tool: (name) => tools.get(name),
  };
}
