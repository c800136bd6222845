// `npm run tools -- import openapi <file> --namespace <ns> [--operations a,b] [--force]`
//
// Drafts catalog/<ns>.yaml from an OpenAPI 3.x document read from a file, offline: a `$ref` reads
// only JSON or YAML files under the document's own folder, within limits (openapi-read.mjs). The draft is deliberately not accepted by `npm run tools -- check`: the
// side-effect class, the parts of the description only a human can write, the trust of every
// free-text output field, a write's postcondition and the kind of every upstream's credential
// carry draft markers until someone decides. A credential is never an input: wherever the document
// puts it, it becomes the upstream's (openapi-credentials.mjs). Constructs the catalog cannot
// express are listed with their location, and an answer's part left out carries a marker too:
// nothing is dropped quietly.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { defaultToolsNote, draftDefaultTools, tooManyTools } from "./default-tools-draft.ts";
import { credentialPlan } from "./openapi-credentials.mjs";
import { draftTool, operationsOf, snakeCase } from "./openapi-operations.mjs";
import { IMPORT_LIMITS, ImportError, readOpenApi } from "./openapi-read.mjs";
import { draftBudget } from "./openapi-schema.mjs";
import { draftUpstream } from "./openapi-upstream.mjs";
import { proxyOriginsOfProject } from "./upstream-hosts.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const NAMESPACE = /^[a-z][a-z0-9_]*$/;
const USAGE =
  "usage: npm run tools -- import openapi <file> --namespace <ns> [--operations a,b] [--force] [--catalog-dir <dir>]";

export { ImportError };

/**
 * @typedef {import("./upstream-hosts.ts").ProxyOrigins} ProxyOrigins
 * @typedef {{ location: string, message: string }} Problem
 * @typedef {{ name: string, operationId: string, method: string, path: string, review: string[] }} DraftedTool
 * @typedef {{ declaration: Record<string, any>, text: string, tools: DraftedTool[], problems: Problem[], notes: string[] }} Draft
 */

/**
 * The draft of a document read from `file` (JSON or YAML, `$ref`s to files under its folder resolved).
 *
 * @param {string} file
 * @param {{ namespace: string, operations?: string[] | null, own?: ProxyOrigins }} options
 * @returns {Promise<Draft>}
 */
export async function importOpenApi(file, options) {
  const document = await readOpenApi(file);
  if (!String(document.openapi ?? "").startsWith("3.")) {
    throw new ImportError(
      `${file}: only OpenAPI 3.x is supported (this is swagger ${document.swagger ?? "?"})`,
    );
  }
  return draftNamespace(document, { ...options, source: file });
}

/**
 * The draft declaration of a dereferenced OpenAPI 3.x document.
 *
 * @param {Record<string, any>} document
 * @param {{ namespace: string, operations?: string[] | null, source?: string, own?: ProxyOrigins }} options the
 *   proxy's own origins (`own`, `npm start`'s when not given) are never proposed as a base
 * @returns {Draft}
 */
export function draftNamespace(
  document,
  { namespace, operations = null, source = "the document", own = undefined },
) {
  if (!NAMESPACE.test(namespace)) {
    throw new ImportError(
      `--namespace ${namespace}: use lower case letters, digits and _, starting with a letter`,
    );
  }
  /** @type {Problem[]} */
  const problems = [];
  // Each upstream reads the same servers: what one reports is said once.
  const said = new Set();
  const report = (location, message) => {
    const key = JSON.stringify([location, message]);
    if (said.has(key)) return;
    said.add(key);
    problems.push({ location, message });
  };
  const context = { report, idempotencyHeaders: new Set(), budget: draftBudget(), own };

  const chosen = chooseOperations(operationsOf(document), operations);
  const credentials = credentialPlan(document, chosen, namespace, report);
  const tools = [];
  /** @type {DraftedTool[]} */
  const drafted = [];
  /** The operation each tool name was drafted from: two operations may give one name. */
  const owners = new Map();
  for (const op of chosen) {
    const credential = credentials.of(op);
    const draft = credential ? draftTool(op, { ...context, credential }) : null;
    if (!draft) continue;
    const name = String(draft.tool.name);
    const operationId = op.operation.operationId ?? `${op.method} ${op.path}`;
    const owner = owners.get(name);
    if (owner !== undefined) {
      report(
        `paths.${op.path}.${op.method}`,
        `its tool name becomes ${name}, as ${owner}'s does; operation ${operationId} not drafted (import one with --operations)`,
      );
      continue;
    }
    owners.set(name, operationId);
    tools.push(draft.tool);
    drafted.push({
      name: String(draft.tool.name),
      operationId: op.operation.operationId ?? "",
      method: op.method.toUpperCase(),
      path: op.path,
      review: draft.review,
    });
  }
  if (context.budget.spent) {
    throw new ImportError(
      `${source}: its schemas come to more than ${IMPORT_LIMITS.maxDraftedNodes} nodes once drafted (the importer's limit; recursive schemas that name each other densely multiply); choose fewer operations with --operations`,
    );
  }
  if (document.webhooks) report("webhooks", "webhooks are not supported; left out of the draft");

  proposeReadBacks(tools);
  // A drafted class is still behind its marker (`{ draft, why }`): what it proposes counts.
  const writes = (binding) =>
    tools.some(
      (tool) => tool.request.upstream === binding && (tool.side_effect?.draft ?? tool.side_effect) !== "read",
    );
  // An upstream no drafted tool goes through is left out (its operations were not drafted).
  const used = credentials.upstreams.filter(
    (upstream, index) => index === 0 || tools.some((tool) => tool.request.upstream === upstream.binding),
  );
  const upstreams = used.map((credential) => ({
    binding: credential.binding,
    ...draftUpstream(document, { ...context, credential, writes: writes(credential.binding) }),
  }));
  const tooMany = tooManyTools(tools.length, "--operations");
  if (tooMany) throw new ImportError(`${source}: ${tooMany}`);
  const notes = upstreams.flatMap((upstream) => upstream.review);
  const defaults = draftDefaultTools(drafted.map((tool) => tool.name));
  if (defaults) notes.push(defaultToolsNote(tools.length));
  const declaration = {
    format: 1,
    namespace,
    upstreams: Object.fromEntries(upstreams.map((upstream) => [upstream.binding, upstream.declaration])),
    ...(defaults ? { default_tools: defaults } : {}),
    tools,
  };
  const comments = upstreams.map((upstream) => upstream.comment);
  const text = toYaml(declaration, { document, source, upstreamComments: comments, drafted });
  return { declaration, text, tools: drafted, problems, notes };
}

/**
 * Names a candidate for each write's postcondition, still behind the marker: a drafted read whose
 * path the write's path extends and whose required arguments the write also takes
 * (`GET /orders/{order_id}/shipment` for `POST /orders/{order_id}/shipment/reroute`).
 */
function proposeReadBacks(tools) {
  for (const write of tools.filter((tool) => typeof tool.postcondition === "string")) {
    const read = tools.find(
      (tool) =>
        tool.side_effect.draft === "read" &&
        write.request.path.startsWith(`${tool.request.path}/`) &&
        (tool.input.required ?? []).every((field) => Object.hasOwn(write.input.properties, field)),
    );
    if (!read) continue;
    const args = (read.input.required ?? []).map((field) => `${field}: {arg: /${field}}`).join(", ");
    write.postcondition = `TODO(review): proposed: tool ${read.name}, args {${args}}, expect the fields this write changes; or no_postcondition: <why>`;
  }
}

/** The operations asked for by operationId (or its snake_case tool name), in document order. */
function chooseOperations(all, wanted) {
  if (!wanted) return all;
  const names = (op) => [
    op.operation.operationId,
    op.operation.operationId && snakeCase(op.operation.operationId),
  ];
  const unknown = wanted.filter((name) => !all.some((op) => names(op).includes(name)));
  if (unknown.length > 0) {
    const known = all.map((op) => op.operation.operationId).filter(Boolean);
    throw new ImportError(
      `--operations: no operation ${unknown.join(", ")}; the document has ${known.join(", ")}`,
    );
  }
  return all.filter((op) => names(op).some((name) => wanted.includes(name)));
}

function toYaml(declaration, { document, source, upstreamComments, drafted }) {
  // A dereferenced document shares one object per `$ref`; each tool gets its own copy, not an alias.
  const doc = new YAML.Document(declaration, { aliasDuplicateObjects: false });
  const title = document.info?.title ? `"${document.info.title}" ${document.info.version ?? ""}`.trim() : "";
  doc.commentBefore = [
    " yaml-language-server: $schema=./schema.json",
    ` Drafted from ${title ? `${title}, ` : ""}${source}, by npm run tools -- import openapi.`,
    " `npm run tools -- check` refuses it until every draft marker is replaced by a decision:",
    "   side_effect: { draft: ..., why: ... }  ->  read | draft | write | destructive",
    "   every 'TODO(review): ...' string       ->  the real text; a trusted_text field that",
    "                                              third parties can write moves to untrusted",
    "   credential.kind                        ->  the kind proposed, once it is confirmed",
  ].join("\n");
  const upstreams = doc.get("upstreams", true);
  for (const [index, item] of (upstreams?.items ?? []).entries()) {
    if (item.key) item.key.commentBefore = upstreamComments[index];
  }
  const toolNodes = doc.get("tools", true)?.items ?? [];
  for (const [index, node] of toolNodes.entries()) {
    const tool = drafted[index];
    if (tool)
      node.commentBefore = ` from ${tool.operationId || "(no operationId)"}: ${tool.method} ${tool.path}`;
  }
  return doc.toString({ lineWidth: 100 });
}

/** @param {string[]} args */
function parseArgs(args) {
  const rest = args[0] === "openapi" ? args.slice(1) : args;
  const options = {
    file: null,
    namespace: null,
    operations: null,
    force: false,
    catalogDir: join(ROOT, "catalog"),
  };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === "--force") options.force = true;
    else if (arg === "--namespace") options.namespace = rest[++i] ?? null;
    else if (arg === "--operations") {
      options.operations = (rest[++i] ?? "")
        .split(",")
        .map((name) => name.trim())
        .filter(Boolean);
    } else if (arg === "--catalog-dir") options.catalogDir = rest[++i] ?? options.catalogDir;
    else if (arg?.startsWith("--")) throw new ImportError(`unknown option ${arg}\n${USAGE}`);
    else if (options.file === null) options.file = arg;
    else throw new ImportError(`one document at a time (got ${options.file} and ${arg})\n${USAGE}`);
  }
  if (!options.file || !options.namespace) throw new ImportError(USAGE);
  return options;
}

/**
 * The command: drafts, writes catalog/<ns>.yaml (never over an existing file without --force) and
 * prints what it wrote and what needs review. Returns the exit code.
 *
 * @param {string[]} args the arguments after `import`, `openapi` first
 * @returns {Promise<number>}
 */
export async function runImportOpenApi(args) {
  try {
    const options = parseArgs(args);
    const target = join(options.catalogDir, `${options.namespace}.yaml`);
    const shown = relative(process.cwd(), target) || target;
    if (existsSync(target) && !options.force) {
      throw new ImportError(`${shown} exists; pass --force to overwrite it`);
    }
    const draft = await importOpenApi(options.file, { ...options, own: await proxyOriginsOfProject(ROOT) });
    if (draft.tools.length === 0) {
      printProblems(draft.problems);
      throw new ImportError(`${options.file}: no operation could be drafted; nothing written`);
    }
    mkdirSync(options.catalogDir, { recursive: true });
    writeFileSync(target, draft.text);
    printSummary(shown, draft);
    return 0;
  } catch (error) {
    if (!(error instanceof ImportError)) throw error;
    console.error(`import openapi: ${error.message}`);
    return 1;
  }
}

function printSummary(shown, draft) {
  const width = Math.max(...draft.tools.map((tool) => tool.name.length));
  console.log(`wrote ${shown}: ${draft.tools.length} tool${draft.tools.length === 1 ? "" : "s"}`);
  for (const tool of draft.tools) {
    console.log(
      `  ${tool.name.padEnd(width)}  from ${tool.operationId || "-"} (${tool.method} ${tool.path})`,
    );
  }
  console.log("\nneeds review before `npm run tools -- check` accepts it:");
  for (const tool of draft.tools) console.log(`  ${tool.name}: ${tool.review.join(", ")}`);
  for (const note of draft.notes) console.log(`  ${note}`);
  printProblems(draft.problems);
}

function printProblems(problems) {
  if (problems.length === 0) return;
  console.log(`\nnot supported (${problems.length}):`);
  for (const problem of problems) console.log(`  ${problem.location}: ${problem.message}`);
}
