import * as z from "zod";
import { sha256Hex } from "../core/digest";
import { ARGUMENTS_LEVEL, INPUT_LIMITS } from "../core/input-limits";
import { RESERVED_KEYS } from "../core/reserved-keys";
import { SIDE_EFFECTS } from "../wire/side-effect";
import { MAX_INLINE_RESULT_BYTES, type ToolSpec } from "./define-tool";
import { checkEffect } from "./effect-rules";
import { unwrap } from "./schema-fields";
import { TIMEOUT_RULE, type TimeoutRule, timeoutProblem } from "./timeout-rules";

/** Thrown when a tool definition breaks a catalog rule; the message names the tool and the rule. */
export class CatalogError extends Error {
  override name = "CatalogError";
}

export const MAX_TOOLS_PER_NAMESPACE = 10;
const TOOL_NAME = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;
/** Provider APIs cap function names at 64 characters, and so does the proxy's edge. */
const MAX_TOOL_NAME = 64;
const DESCRIPTION_PARTS = ["does", "use_when", "avoid_when", "side_effects"] as const;
const MIN_DESCRIPTION_LENGTH = 12;
const MAX_TIMEOUT_MS = 30_000;
/** A reason for skipping a postcondition must say something an operator can check. */
const MIN_NO_POSTCONDITION_REASON = 20;

function describedAs(schema: z.ZodType): string | undefined {
  return schema.description ?? unwrap(schema).description;
}

function isStrictObject(schema: z.ZodObject<z.ZodRawShape>): boolean {
  const catchall = schema._zod.def.catchall;
  return catchall !== undefined && catchall._zod.def.type === "never";
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

type Report = (field: string, message: string) => void;

/**
 * Every object in the input, at any depth, must be strict and every field described, and nothing in
 * it may need what the edge refuses in every body (core/input-limits.ts): such a field could never
 * be sent. `level` is the schema's own nesting, the arguments being 0.
 */
function checkInputSchema(tool: string, schema: z.ZodType, path: string, report: Report, level = 0): void {
  const inner = unwrap(schema);
  const named = path === "" ? "its input schema" : `"${path}"`;
  if (inner instanceof z.ZodString && (inner.minLength ?? 0) > INPUT_LIMITS.string_chars) {
    report(
      "input",
      `tool "${tool}": field ${named} needs at least ${inner.minLength} characters; the edge refuses strings over ${INPUT_LIMITS.string_chars}, so it could never be sent`,
    );
  }
  if (!(inner instanceof z.ZodArray || inner instanceof z.ZodObject)) return;
  if (ARGUMENTS_LEVEL + level > INPUT_LIMITS.depth) {
    report(
      "input",
      `tool "${tool}": field ${named} nests ${level} levels into the arguments; a call carries at most ${INPUT_LIMITS.depth - ARGUMENTS_LEVEL} (bodies nest at most ${INPUT_LIMITS.depth} levels), so it could never be sent`,
    );
    return;
  }
  if (inner instanceof z.ZodArray) {
    const least = minItems(inner);
    if (least > INPUT_LIMITS.array_items) {
      report(
        "input",
        `tool "${tool}": field ${named} needs at least ${least} items; the edge refuses arrays over ${INPUT_LIMITS.array_items}, so it could never be sent`,
      );
    }
    checkInputSchema(tool, inner.element as z.ZodType, `${path}[]`, report, level + 1);
    return;
  }
  const where = path === "" ? "its input schema" : `the object at "${path}"`;
  if (!isStrictObject(inner)) {
    report(
      "input",
      `tool "${tool}": ${where} is not strict; use z.strictObject(...) or .strict() so unknown fields are refused`,
    );
  }
  // An optional or defaulted field may be left out (zod marks it `optin`); the rest must be sent.
  const required = Object.values(inner.shape).filter(
    (field) => (field as z.ZodType)._zod.optin === undefined,
  ).length;
  if (required > INPUT_LIMITS.object_keys) {
    report(
      "input",
      `tool "${tool}": ${where} requires ${required} fields; the edge refuses objects of more than ${INPUT_LIMITS.object_keys}, so it could never be sent`,
    );
  }
  for (const [field, fieldSchema] of Object.entries(inner.shape)) {
    const fieldPath = path === "" ? field : `${path}.${field}`;
    if (RESERVED_KEYS.has(field)) {
      report(
        "input",
        `tool "${tool}": field "${fieldPath}" has a reserved name; every call's arguments are refused holding it, so rename it`,
      );
    }
    if (field.length > INPUT_LIMITS.key_chars) {
      report(
        "input",
        `tool "${tool}": field "${fieldPath}" has a name of ${field.length} characters; the edge refuses names over ${INPUT_LIMITS.key_chars}, so rename it`,
      );
    }
    const description = describedAs(fieldSchema as z.ZodType);
    if (!description || description.trim().length === 0) {
      report(
        "input",
        `tool "${tool}": field "${fieldPath}" has no description; a model fills fields from their descriptions`,
      );
    }
    checkInputSchema(tool, fieldSchema as z.ZodType, fieldPath, report, level + 1);
  }
}

/** The fewest items an array schema accepts (its `.min(n)` or `.length(n)`). */
function minItems(schema: z.ZodArray): number {
  const checks = (schema._zod.def.checks ?? []) as {
    _zod: { def: { check?: string; minimum?: number; length?: number } };
  }[];
  let least = 0;
  for (const { _zod } of checks) {
    if (_zod.def.check === "min_length") least = Math.max(least, _zod.def.minimum ?? 0);
    if (_zod.def.check === "length_equals") least = Math.max(least, _zod.def.length ?? 0);
  }
  return least;
}

/** Whether a string schema is pinned to a pattern: a `.regex(...)` or a format such as `z.iso.datetime()`. */
function hasPattern(schema: z.ZodString): boolean {
  const def = schema._zod.def as { format?: string; checks?: { _zod: { def: { check?: string } } }[] };
  if (def.format !== undefined) return true;
  return (def.checks ?? []).some((check) => check._zod.def.check === "string_format");
}

/**
 * The output schema's string leaves, by path (`recent_messages[].body`), each flagged as free text
 * (no regex, no format) or not. Enums and literals are not strings here.
 */
export function stringLeaves(schema: z.ZodType, path = ""): { path: string; free: boolean }[] {
  const inner = unwrap(schema);
  if (inner instanceof z.ZodString) return [{ path, free: !hasPattern(inner) }];
  if (inner instanceof z.ZodArray) return stringLeaves(inner.element as z.ZodType, `${path}[]`);
  if (inner instanceof z.ZodObject) {
    return Object.entries(inner.shape).flatMap(([field, child]) =>
      stringLeaves(child as z.ZodType, path === "" ? field : `${path}.${field}`),
    );
  }
  return [];
}

function covers(prefix: string, path: string): boolean {
  return path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[]`);
}

/**
 * Every free-text output field is classified: `untrusted`, `trusted_text` with a reason, or masked
 * by `sensitive`. Declared paths must name string fields, so a typo cannot leave a field unfenced.
 */
function checkOutputTrust(tool: string, spec: ToolSpec, report: Report): void {
  const leaves = stringLeaves(spec.output);
  const known = new Set(leaves.map((leaf) => leaf.path));
  const untrusted = spec.untrusted ?? [];
  const trusted = spec.trusted_text ?? {};
  for (const path of [...untrusted, ...Object.keys(trusted)]) {
    if (!known.has(path)) {
      report(
        "output",
        `tool "${tool}": "${path}" is declared untrusted or trusted_text but is not a string field of the output schema`,
      );
    }
  }
  for (const [path, reason] of Object.entries(trusted)) {
    if (typeof reason !== "string" || reason.trim().length === 0) {
      report("output.trusted_text", `tool "${tool}": trusted_text "${path}" needs a reason`);
    }
    if (untrusted.includes(path)) {
      report("output", `tool "${tool}": "${path}" is declared both untrusted and trusted_text`);
    }
  }
  const masked = Object.keys(spec.sensitive ?? {});
  for (const leaf of leaves) {
    if (!leaf.free) continue;
    if (untrusted.includes(leaf.path) || leaf.path in trusted) continue;
    if (masked.some((prefix) => covers(prefix, leaf.path))) continue;
    report(
      "output",
      `tool "${tool}": output field "${leaf.path || "(the result)"}" is free text but not classified; list it in untrusted (third-party text, fenced) or in trusted_text with the reason it cannot carry outside text`,
    );
  }
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
  if (!TOOL_NAME.test(name) || name.length > MAX_TOOL_NAME) {
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

/** The input is a strict, described zod object; the output a zod schema whose free text is classified. */
function checkSchemas(name: string, spec: ToolSpec, report: Report): void {
  if (spec.input instanceof z.ZodObject) {
    checkInputSchema(name, spec.input, "", report);
  } else {
    report("input", `tool "${name}": input must be a zod object schema`);
  }
  if (spec.output instanceof z.ZodType) {
    checkOutputTrust(name, spec, report);
  } else {
    report(
      "output",
      `tool "${name}": output must be a zod schema; it is the whitelist of what the model sees`,
    );
  }
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
  #version: Promise<string> | undefined;

  constructor(byNamespace: ByNamespace | (() => ByNamespace), version?: string) {
    this.#load = typeof byNamespace === "function" ? byNamespace : () => byNamespace;
    this.#known = version;
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

  /** A tool by name, only within the given namespace: other namespaces are invisible. */
  find(namespace: string, name: string): ToolSpec | undefined {
    return this.#byNamespace.get(namespace)?.get(name);
  }

  all(): ToolSpec[] {
    return [...this.#byNamespace.values()].flatMap((tools) => [...tools.values()]);
  }

  /**
   * A content hash of every tool's contract: changes whenever a schema, description or version
   * does. A compiled catalog knows it without building a schema; it still loads (and throws when
   * it breaks a rule) like any other use.
   */
  version(): Promise<string> {
    if (this.#version) return this.#version;
    this.#version =
      this.#known === undefined ? computeCatalogVersion(this.all()) : this.#loadThen(this.#known);
    return this.#version;
  }

  /** `value` once the catalog has loaded: a catalog that breaks a rule throws here, as at every use. */
  #loadThen(value: string): Promise<string> {
    this.#byNamespace;
    return Promise.resolve(value);
  }
}

/**
 * What a catalog's version hashes: each tool's contract (its JSON Schemas among them), in the
 * catalog's order. Compile hashes the same text in Node (scripts/tools/catalog-check.ts).
 */
export function catalogContract(tools: readonly ToolSpec[]): string {
  return JSON.stringify(
    tools.map((tool) => ({
      name: tool.name,
      namespace: tool.namespace,
      version: tool.version,
      side_effect: tool.side_effect,
      description: tool.description,
      timeout_ms: tool.timeout_ms,
      binding: tool.upstream?.binding ?? "builtin",
      input: z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }),
      output: z.toJSONSchema(tool.output, { io: "output", unrepresentable: "any" }),
    })),
  );
}

/** A catalog version from the SHA-256 of its contract, in hex. */
export function catalogVersionOfDigest(hex: string): string {
  return `cat_${hex.slice(0, 16)}`;
}

/** The version of a catalog of `tools`, computed: every tool's schemas are built and converted. */
export async function computeCatalogVersion(tools: readonly ToolSpec[]): Promise<string> {
  return catalogVersionOfDigest(await sha256Hex(catalogContract(tools)));
}

/**
 * The built-in tools every namespace gets (bound to "@..." and answered from the run's own
 * storage) do not count against the cap: the cap keeps a model's choice among a namespace's own
 * tools small.
 */
function countsAgainstCap(spec: ToolSpec): boolean {
  return !spec.upstream?.binding?.startsWith("@");
}

/**
 * Every catalog rule a set of tools breaks: each tool's own rules, then the namespace rules (unique
 * names, at most ten tools, postcondition and decision-context reads of the same namespace). Both
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
        message: `namespace "${spec.namespace}" has more than ${MAX_TOOLS_PER_NAMESPACE} tools; split it so a model can still choose well`,
      });
    }
  }
  for (const tools of byNamespace.values()) {
    for (const spec of tools.values()) {
      checkObserverTools(tools, spec, (field, message) => problems.push({ tool: spec.name, field, message }));
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
 * use of `version()` building and converting every tool's schemas.
 */
export function lazyCatalog(
  specs: () => readonly ToolSpec[],
  rule: TimeoutRule = TIMEOUT_RULE,
  rules: CatalogRules = "all",
  version?: string,
): Catalog {
  return new Catalog(() => checkedTools(specs(), rule, rules), version);
}
