import { sha256Hex } from "../core/digest";
import { SIDE_EFFECTS } from "../wire/side-effect";
import { defaultSetOf, defaultSetProblems } from "./default-tools";
import { MAX_INLINE_RESULT_BYTES, type ToolSpec } from "./define-tool";
import { deprecationProblems } from "./deprecation";
import { checkEffect } from "./effect-rules";
import { checkSchemas, type Report } from "./schema-checks";
import { toolRef } from "./subset";
import { TIMEOUT_RULE, type TimeoutRule, timeoutProblem } from "./timeout-rules";
import { computeToolVersion, type ToolVersion } from "./tool-version";

/** Thrown when a tool definition breaks a catalog rule; the message names the tool and the rule. */
export class CatalogError extends Error {
  override name = "CatalogError";
}

/**
 * The most tools one namespace holds: what an API has, within what the edge does with a whole
 * namespace in one request. A run lists only its task's subset, or the namespace's default set of
 * at most MAX_LISTED_TOOLS (`default-tools.ts`); the namespace as a whole meets the edge where one
 * request handles all of it: `GET /v1/tools` exports every spec of it in one answer (its schemas
 * converted once per isolate), and each `find_tools` call ranks every granted tool by its words.
 * At 200 tools of the demo's size both stay inside a Worker's memory and CPU (measured in
 * test/unit/namespace-bound.test.ts: about 150 KB of OpenAI specs, under 1 MiB of MCP specs, which
 * carry the envelope's schema each, built once per isolate in under a second; a ranking in about a
 * millisecond, a few at the longest query), and `INPUT_LIMITS.array_items` (100) keeps a run's own
 * subset smaller still.
 */
export const MAX_TOOLS_PER_NAMESPACE = 200;
const TOOL_NAME = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;
/** Provider APIs cap function names at 64 characters, and so does the proxy's edge. */
const MAX_TOOL_NAME = 64;
const DESCRIPTION_PARTS = ["does", "use_when", "avoid_when", "side_effects"] as const;
const MIN_DESCRIPTION_LENGTH = 12;
const MAX_TIMEOUT_MS = 30_000;
/** A reason for skipping a postcondition must say something an operator can check. */
const MIN_NO_POSTCONDITION_REASON = 20;

/** Whether `name` is a tool's name: snake_case verb_noun, at most MAX_TOOL_NAME characters. */
export function isToolName(name: string): boolean {
  return TOOL_NAME.test(name) && name.length <= MAX_TOOL_NAME;
}

/**
 * A broken catalog rule: the tool, the field of its definition at fault (as a declaration names it:
 * `input`, `output`, `postcondition`, ...) and the sentence a CatalogError carries.
 */
export interface CatalogProblem {
  tool: string;
  field: string;
  message: string;
}

/**
 * Which rules a check runs: `all`, or `structure`, every rule but the walks over the input and
 * output schemas (strict objects, described fields, classified free text, and the arguments an
 * effect identity or value names). Only a catalog whose schemas were checked with `all` when it
 * was compiled, from the very same zod source, may skip them (src/tools/index.ts says why that
 * holds); the walks build every tool's schemas.
 */
export type CatalogRules = "all" | "structure";

/** Every catalog rule one tool breaks, in the order of its definition's fields. */
export function toolSpecProblems(
  spec: ToolSpec,
  rule: TimeoutRule = TIMEOUT_RULE,
  rules: CatalogRules = "all",
): CatalogProblem[] {
  const name = typeof spec.name === "string" ? spec.name : String(spec.name);
  const problems: CatalogProblem[] = [];
  const report: Report = (field, message) => problems.push({ tool: name, field, message });
  if (!isToolName(name)) {
    report(
      "name",
      `tool "${name}": name must be snake_case verb_noun of at most ${MAX_TOOL_NAME} characters, such as "lookup_order" or "issue_refund"`,
    );
  }
  if (!SIDE_EFFECTS.includes(spec.side_effect)) {
    report(
      "side_effect",
      `tool "${name}": side_effect must be one of ${SIDE_EFFECTS.join(", ")}; a tool that cannot be classified is not exposed`,
    );
  }
  if (typeof spec.namespace !== "string" || !/^[a-z][a-z0-9_]*$/.test(spec.namespace)) {
    report("namespace", `tool "${name}": namespace must be a lowercase identifier`);
  }
  for (const part of DESCRIPTION_PARTS) {
    const text = spec.description?.[part];
    if (typeof text !== "string" || text.trim().length < MIN_DESCRIPTION_LENGTH) {
      report(
        `description.${part}`,
        `tool "${name}": description.${part} is missing or too short; every tool says what it does, when to use it, when not to, and its side effects`,
      );
    }
  }
  if (rules === "all") checkSchemas(name, spec, report);
  if (typeof spec.timeout_ms !== "number" || !(spec.timeout_ms > 0) || spec.timeout_ms > MAX_TIMEOUT_MS) {
    report("timeout_ms", `tool "${name}": timeout_ms must be a number between 1 and ${MAX_TIMEOUT_MS}`);
  } else if (!spec.builtin) {
    // A built-in tool is answered from the run's own storage: no upstream to wait for or retry.
    const problem = timeoutProblem(name, spec.side_effect, spec.timeout_ms, rule);
    if (problem) report("timeout_ms", problem);
  }
  if (
    !Number.isInteger(spec.max_result_bytes) ||
    spec.max_result_bytes < 1 ||
    spec.max_result_bytes > MAX_INLINE_RESULT_BYTES
  ) {
    report(
      "max_result_bytes",
      `tool "${name}": max_result_bytes must be a whole number of bytes between 1 and ${MAX_INLINE_RESULT_BYTES}; a larger result is paged behind a handle`,
    );
  }
  checkUpstream(name, spec, report);
  if (typeof spec.version !== "string" || spec.version.length === 0) {
    report("version", `tool "${name}": version is required`);
  }
  checkPostcondition(name, spec, report);
  // The arguments an effect identity and value name are looked up in the input schema: a walk too.
  checkEffect(spec, report, rules === "all");
  return problems;
}

/**
 * A tool goes upstream through a named binding, or is built in: answered by the proxy from the
 * run's own storage, with no key and no effect, so only a read may be built in.
 */
function checkUpstream(name: string, spec: ToolSpec, report: Report): void {
  if (spec.builtin) {
    if (spec.side_effect !== "read") report("builtin", `tool "${name}": only read tools may be built in`);
    if (spec.upstream !== null) report("upstream", `tool "${name}": a built-in tool has no upstream`);
    return;
  }
  if (typeof spec.upstream?.binding !== "string" || spec.upstream.binding.length === 0) {
    report(
      "upstream",
      `tool "${name}": upstream.binding must name the wrangler.toml binding its calls go through`,
    );
    return;
  }
  if (typeof spec.upstream.request !== "function") {
    report("upstream", `tool "${name}": upstream.request must map arguments to an HTTP request`);
  }
}

/**
 * A write or destructive tool reads back what it did (`observe`), or says why it cannot
 * (`no_postcondition`): a 2xx from an upstream is a claim, not a fact.
 */
function checkPostcondition(name: string, spec: ToolSpec, report: Report): void {
  const observe = spec.observe ?? null;
  const reason = spec.no_postcondition ?? null;
  if (observe !== null && reason !== null) {
    report(
      "no_postcondition",
      `tool "${name}": declares both observe and no_postcondition; keep the postcondition and drop the reason`,
    );
    return;
  }
  if (observe !== null) {
    if (
      typeof observe.tool !== "string" ||
      typeof observe.args !== "function" ||
      typeof observe.verify !== "function"
    ) {
      report(
        "postcondition",
        `tool "${name}": observe needs a read tool's name, an args mapping and a verify function`,
      );
    }
    return;
  }
  if (reason !== null) {
    if (typeof reason !== "string" || reason.trim().length < MIN_NO_POSTCONDITION_REASON) {
      report(
        "no_postcondition",
        `tool "${name}": no_postcondition must give the documented reason, at least ${MIN_NO_POSTCONDITION_REASON} characters`,
      );
    }
    return;
  }
  if (spec.side_effect === "write" || spec.side_effect === "destructive") {
    report(
      "postcondition",
      `tool "${name}": a ${spec.side_effect} tool needs a postcondition (observe: a read that checks the effect happened) or no_postcondition: "<documented reason>"`,
    );
  }
}

/**
 * A postcondition's read and a decision context's read must be read tools of the same namespace:
 * the proxy sends each with that tool's credential.
 */
function checkObserverTools(tools: ReadonlyMap<string, ToolSpec>, spec: ToolSpec, report: Report): void {
  const context = spec.decision_context;
  if (context) {
    const reader = tools.get(context.tool);
    if (reader?.side_effect !== "read") {
      report(
        "decision_context.tool",
        `tool "${spec.name}": its decision context reads with "${context.tool}", which is not a read tool of namespace "${spec.namespace}"`,
      );
    }
    if (typeof context.args !== "function" || typeof context.facts !== "function") {
      report(
        "decision_context",
        `tool "${spec.name}": decision_context needs an args mapping and a facts function`,
      );
    }
  }
  if (!spec.observe) return;
  const observer = tools.get(spec.observe.tool);
  if (!observer) {
    report(
      "postcondition.tool",
      `tool "${spec.name}": its postcondition reads with "${spec.observe.tool}", which is not a tool of namespace "${spec.namespace}"`,
    );
  } else if (observer.side_effect !== "read") {
    report(
      "postcondition.tool",
      `tool "${spec.name}": its postcondition tool "${observer.name}" must be a read, not ${observer.side_effect}`,
    );
  }
}

type ByNamespace = ReadonlyMap<string, ReadonlyMap<string, ToolSpec>>;

/**
 * The loaded, checked set of tools, grouped by namespace. Given a loader, it loads on its first
 * use (`lazyCatalog`); a loader that throws throws at every use, so a bad catalog never serves.
 */
export class Catalog {
  readonly #load: () => ByNamespace;
  #loaded: ByNamespace | undefined;
  /** The version computed where the catalog was compiled, when it was (`servedCatalogVersion`). */
  readonly #known: string | undefined;
  /** Its tools' versions computed where it was compiled, by `namespace.tool` (`servedToolVersions`). */
  readonly #knownTools: Readonly<Record<string, ToolVersion>>;
  #version: Promise<string> | undefined;

  constructor(
    byNamespace: ByNamespace | (() => ByNamespace),
    version?: string,
    toolVersions: Readonly<Record<string, ToolVersion>> = {},
  ) {
    this.#load = typeof byNamespace === "function" ? byNamespace : () => byNamespace;
    this.#known = version;
    this.#knownTools = toolVersions;
  }

  get #byNamespace(): ByNamespace {
    this.#loaded ??= this.#load();
    return this.#loaded;
  }

  namespaces(): string[] {
    return [...this.#byNamespace.keys()];
  }

  hasNamespace(namespace: string): boolean {
    return this.#byNamespace.has(namespace);
  }

  tools(namespace: string): ToolSpec[] {
    return [...(this.#byNamespace.get(namespace)?.values() ?? [])];
  }

  /**
   * The tools, by name, a run of the namespace opened without a subset lists: its declared default
   * set; null when it declares none (it has at most MAX_LISTED_TOOLS tools, all listed).
   */
  listedByDefault(namespace: string): string[] | null {
    return defaultSetOf(this.tools(namespace));
  }

  /** A tool by name, only within the given namespace: other namespaces are invisible. */
  find(namespace: string, name: string): ToolSpec | undefined {
    return this.#byNamespace.get(namespace)?.get(name);
  }

  all(): ToolSpec[] {
    return [...this.#byNamespace.values()].flatMap((tools) => [...tools.values()]);
  }

  /**
   * A content hash of every tool's version and whether runs list it by default: it changes
   * whenever one tool's contract does. A compiled catalog knows it without building a schema; it
   * still loads (and throws when it breaks a rule) like any other use.
   */
  version(): Promise<string> {
    if (this.#version) return this.#version;
    this.#version =
      this.#known === undefined
        ? catalogVersionOf(this.all(), (tool) => this.toolVersion(tool))
        : this.#loadThen(this.#known);
    return this.#version;
  }

  /**
   * A tool's version (`tool-version.ts`): the one compile computed for a tool this catalog serves,
   * else computed here once per tool (any other tool, such as a run's discovery built-ins).
   */
  toolVersion(tool: ToolSpec): Promise<ToolVersion> {
    const known = this.#knownTools[toolRef(tool)];
    if (known && this.find(tool.namespace, tool.name) === tool) return Promise.resolve(known);
    return computeToolVersion(tool);
  }

  /** `value` once the catalog has loaded: a catalog that breaks a rule throws here, as at every use. */
  #loadThen(value: string): Promise<string> {
    this.#byNamespace;
    return Promise.resolve(value);
  }
}

/**
 * What a catalog's version hashes: each tool's `namespace.tool`, its version and whether runs list
 * it by default, in the catalog's order. Compile hashes the same text in Node
 * (scripts/tools/catalog-check.ts).
 */
export function catalogContract(tools: readonly ToolSpec[], versions: readonly ToolVersion[]): string {
  return JSON.stringify(
    tools.map((tool, index) => [toolRef(tool), versions[index]?.version ?? null, tool.listed_by_default]),
  );
}

/** A catalog version from the SHA-256 of its contract, in hex. */
export function catalogVersionOfDigest(hex: string): string {
  return `cat_${hex.slice(0, 16)}`;
}

async function catalogVersionOf(
  tools: readonly ToolSpec[],
  versionOf: (tool: ToolSpec) => Promise<ToolVersion>,
): Promise<string> {
  const versions = await Promise.all(tools.map(versionOf));
  return catalogVersionOfDigest(await sha256Hex(catalogContract(tools, versions)));
}

/** The version of a catalog of `tools`, computed: every tool's schemas are built and converted. */
export function computeCatalogVersion(tools: readonly ToolSpec[]): Promise<string> {
  return catalogVersionOf(tools, computeToolVersion);
}

/**
 * The built-in tools every namespace gets (bound to "@..." and answered from the run's own
 * storage) do not count against the bound, nor towards a default set: they are the run's own.
 */
function countsAgainstCap(spec: ToolSpec): boolean {
  return !spec.builtin && !spec.upstream?.binding?.startsWith("@");
}

/**
 * Every catalog rule a set of tools breaks: each tool's own rules, then the namespace rules (unique
 * names, at most MAX_TOOLS_PER_NAMESPACE tools, a default set past MAX_LISTED_TOOLS of them,
 * postcondition and decision-context reads of the same namespace, a deprecation's replacement and
 * dates). Both
 * `loadCatalog` and `npm run tools -- check` use it, so code tools and declared tools pass one set
 * of rules.
 */
export function catalogProblems(
  specs: readonly ToolSpec[],
  rule: TimeoutRule = TIMEOUT_RULE,
  rules: CatalogRules = "all",
): {
  problems: CatalogProblem[];
  byNamespace: Map<string, Map<string, ToolSpec>>;
} {
  const problems: CatalogProblem[] = [];
  const byNamespace = new Map<string, Map<string, ToolSpec>>();
  for (const spec of specs) {
    problems.push(...toolSpecProblems(spec, rule, rules));
    let tools = byNamespace.get(spec.namespace);
    if (!tools) {
      tools = new Map();
      byNamespace.set(spec.namespace, tools);
    }
    if (tools.has(spec.name)) {
      problems.push({
        tool: spec.name,
        field: "name",
        message: `tool "${spec.name}" is defined twice in namespace "${spec.namespace}"`,
      });
      continue;
    }
    tools.set(spec.name, spec);
    if (
      [...tools.values()].filter(countsAgainstCap).length === MAX_TOOLS_PER_NAMESPACE + 1 &&
      countsAgainstCap(spec)
    ) {
      problems.push({
        tool: spec.name,
        field: "name",
        message: `namespace "${spec.namespace}" has more than ${MAX_TOOLS_PER_NAMESPACE} tools, the most the edge serves from one namespace; split it by the API's areas`,
      });
    }
  }
  const find = (namespace: string, name: string) => byNamespace.get(namespace)?.get(name);
  for (const [namespace, tools] of byNamespace) {
    for (const spec of tools.values()) {
      checkObserverTools(tools, spec, (field, message) => problems.push({ tool: spec.name, field, message }));
      for (const message of deprecationProblems(spec, find)) {
        problems.push({ tool: spec.name, field: "deprecated", message });
      }
    }
    const own = [...tools.values()].filter(countsAgainstCap);
    for (const problem of defaultSetProblems(namespace, own)) {
      problems.push({ ...problem, field: "default_tools" });
    }
  }
  return { problems, byNamespace };
}

/**
 * Checks every tool and builds the catalog. Throws a CatalogError naming the tool and the first
 * rule it breaks: a proxy with a half-valid catalog must not start. `rule` is the timeout rule by
 * side-effect class (`timeout-rules.ts`); only a test catalog with scaled-down timeouts passes another.
 */
export function loadCatalog(
  specs: readonly ToolSpec[],
  rule: TimeoutRule = TIMEOUT_RULE,
  rules: CatalogRules = "all",
): Catalog {
  return new Catalog(checkedTools(specs, rule, rules));
}

/** The tools grouped by namespace, or the CatalogError of the first rule one of them breaks. */
function checkedTools(specs: readonly ToolSpec[], rule: TimeoutRule, rules: CatalogRules): ByNamespace {
  const { problems, byNamespace } = catalogProblems(specs, rule, rules);
  const [first] = problems;
  if (first) throw new CatalogError(first.message);
  return byNamespace;
}

/**
 * The catalog of `specs`, loaded and checked (as `loadCatalog` does) on its first use rather than
 * now: an isolate that starts builds no tool. A catalog that breaks a rule throws its CatalogError
 * at every use, so it never serves a call. `version`, when compile computed it, spares the first
 * use of `version()` building and converting every tool's schemas; `toolVersions`, each tool's.
 */
export function lazyCatalog(
  specs: () => readonly ToolSpec[],
  rule: TimeoutRule = TIMEOUT_RULE,
  rules: CatalogRules = "all",
  version?: string,
  toolVersions?: Readonly<Record<string, ToolVersion>>,
): Catalog {
  return new Catalog(() => checkedTools(specs(), rule, rules), version, toolVersions);
}
