// `npm run tools -- check` and `compile`: every catalog/*.yaml checked against the declaration
// schema, the rules only a declaration can break (placeholders, upstreams, settings, secrets, draft
// markers, remote tools' pins) and the catalog rules code tools pass (src/catalog/catalog.ts, the
// same code), every problem of every file at once. Run under tsx, so the rules are the Worker's own modules.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { unstable_readConfig as readConfig } from "wrangler";
import { parseDocument } from "yaml";
import * as z from "zod";
import {
  Catalog,
  type CatalogProblem,
  catalogContract,
  catalogProblems,
  catalogVersionOfDigest,
} from "../../src/catalog/catalog";
import type { Certification } from "../../src/catalog/certification";
import {
  type CatalogFile,
  CatalogFileSchema,
  type ToolDeclaration,
  ToolDeclarationSchema,
} from "../../src/catalog/declaration";
import { declaredTool } from "../../src/catalog/declared-tool";
import type { SideEffect, ToolSpec } from "../../src/catalog/define-tool";
import { tenantSetting } from "../../src/catalog/policy-vocabulary";
import { placeholders, pointerTokens } from "../../src/catalog/templates";
import { type ToolVersion, toolVersionWith } from "../../src/catalog/tool-version";
import { OPTIONAL_SECRETS, REQUIRED_SECRETS } from "../../src/config/secrets";
import type { TenantConfig } from "../../src/config/tenants";
import { readResultPage } from "../../src/tools/builtins";
import { SIDE_EFFECTS } from "../../src/wire/side-effect";
import { certificationsOf, standingsOf, type UpstreamStanding } from "./catalog-certifications";
import { credentialRules } from "./catalog-credential-rules";
import { defaultToolsRules } from "./catalog-default-rules";
import { keyToolRules, undecidedKeyProblems } from "./catalog-key-rules";
import { compiledCatalogModule, evaluateSchemas, schemaSources } from "./catalog-module";
import { referenceRules } from "./catalog-reference-rules";
import { remoteToolRules } from "./catalog-remote-rules";
import { formatPath } from "./located";
import { pinsFileOf, readPins } from "./mcp-pins";
import {
  approversProblems,
  type DeployedTenant,
  ENVIRONMENTS,
  profileToolsOfDeployment,
  readTenants,
  repeatEffectsProblems,
  toolLimitsProblems,
} from "./tenants-check";
import { compiledTenantsModule } from "./tenants-module";
import { SchemaError } from "./zod-source";

/** What the deployment offers a declaration: tenants, bindings and secrets, per environment. */
interface Deployment {
  /** The tenants that parse; the others are `problems`. */
  tenants: DeployedTenant[];
  /** Each environment's `TENANTS`, decoded: what the Worker is given. */
  tables: Record<(typeof ENVIRONMENTS)[number], unknown>;
  bindings: Record<(typeof ENVIRONMENTS)[number], Set<string>>;
  secrets: Set<string>;
  problems: string[];
}

function readDeployment(root: string): Deployment {
  const { tenants, tables, problems } = readTenants(root);
  const bindings = { sandbox: new Set<string>(), production: new Set<string>() };
  for (const environment of ENVIRONMENTS) {
    const config = readConfig(
      { config: join(root, "wrangler.toml"), env: environment },
      { hideWarnings: true },
    );
    for (const service of config.services ?? []) bindings[environment].add(service.binding);
    for (const [name, value] of Object.entries(config.vars)) {
      if (typeof value === "string" && /^https?:\/\//.test(value)) bindings[environment].add(name);
    }
  }
  const template = JSON.parse(readFileSync(join(root, "secrets.production.example.json"), "utf8")) as object;
  const secrets = new Set<string>([...Object.keys(template), ...REQUIRED_SECRETS, ...OPTIONAL_SECRETS]);
  return { tenants, tables, bindings, secrets, problems };
}

/** The importer's marks of what a human must still decide: refused until they are gone. */
function draftMarkers(
  value: unknown,
  path: PropertyKey[],
  report: (path: PropertyKey[], problem: string) => void,
) {
  if (typeof value === "string" && value.startsWith("TODO(review):")) {
    report(path, `left for review by the importer: "${value}"; decide it and replace the marker`);
  } else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) draftMarkers(item, [...path, index], report);
  } else if (typeof value === "object" && value !== null) {
    if ("draft" in value) {
      report(
        [...path, "draft"],
        "a draft marker left by the importer; decide what it proposes and remove it",
      );
    }
    for (const [key, item] of Object.entries(value)) {
      if (key !== "draft") draftMarkers(item, [...path, key], report);
    }
  }
}

/** Where a declared tool's catalog problem lies, in the declaration's own words. */
const FIELD_PATHS: Record<string, string> = {
  upstream: "request.upstream",
  observe: "postcondition",
};

interface Located {
  file: string;
  index: number;
  declaration: ToolDeclaration;
  spec: ToolSpec;
}

/** The argument names an `{ arg: /pointer }` can start with: the input's top-level fields. */
function inputFields(tool: ToolDeclaration): Record<string, { type?: unknown }> {
  const properties = tool.input.properties;
  return typeof properties === "object" && properties !== null
    ? (properties as Record<string, { type?: unknown }>)
    : {};
}

/** Every `{ arg: /pointer }` of a template, with where it sits. */
function argRefs(template: unknown, path: PropertyKey[]): { path: PropertyKey[]; pointer: string }[] {
  if (Array.isArray(template)) return template.flatMap((item, index) => argRefs(item, [...path, index]));
  if (typeof template !== "object" || template === null) return [];
  const entries = Object.entries(template);
  if (entries.length === 1 && entries[0]?.[0] === "arg" && typeof entries[0][1] === "string") {
    return [{ path, pointer: entries[0][1] }];
  }
  return entries.flatMap(([key, item]) => argRefs(item, [...path, key]));
}

function toolRules(
  file: CatalogFile,
  tool: ToolDeclaration,
  deployment: Deployment,
  report: (path: PropertyKey[], problem: string) => void,
): void {
  const fields = inputFields(tool);
  const { request } = tool;
  const upstream = file.upstreams[request.upstream];
  const remote = "tool" in request;
  if (!upstream) {
    report(
      ["request", "upstream"],
      `${request.upstream} is not a declared upstream; declare it under upstreams`,
    );
  } else if (remote && upstream.kind !== "mcp") {
    report(
      ["request", "tool"],
      `${request.upstream} is an HTTP upstream; a remote tool (request.tool) needs an upstream of kind mcp`,
    );
  } else if (!remote && upstream.kind === "mcp") {
    report(
      ["request", "upstream"],
      `${request.upstream} is an MCP server: name its tool (request.tool and request.pin), not a method and path`,
    );
  } else if (upstream.kind === "mcp") {
    for (const [index, carrier] of upstream.idempotency.carriers.entries()) {
      if (
        typeof carrier === "object" &&
        tool.side_effect !== "read" &&
        !Object.hasOwn(fields, carrier.argument)
      ) {
        report(
          ["request", "upstream"],
          `${request.upstream}'s idempotency.carriers[${index}] puts the key in argument "${carrier.argument}", which is not an input field of this ${tool.side_effect} tool`,
        );
      }
    }
  }
  const path = "path" in request ? request.path : "";
  const required = Array.isArray(tool.input.required) ? tool.input.required : [];
  for (const name of placeholders(path)) {
    const type = fields[name]?.type;
    if (!Object.hasOwn(fields, name)) report(["request", "path"], `{${name}} is not an input field`);
    else if (type !== "string" && type !== "integer" && type !== "number") {
      report(["request", "path"], `{${name}} must be a string or number input field to fill a path`);
    } else if (!required.includes(name)) {
      report(
        ["request", "path"],
        `{${name}} must be a required input field: left out, it would leave its path segment empty`,
      );
    }
  }
  const refs = [
    ...argRefs("query" in request ? (request.query ?? {}) : {}, ["request", "query"]),
    ...argRefs("body" in request ? request.body : undefined, ["request", "body"]),
    ...argRefs(tool.postcondition?.args ?? {}, ["postcondition", "args"]),
    ...argRefs(tool.postcondition?.expect ?? {}, ["postcondition", "expect"]),
    ...argRefs(tool.decision_context?.args ?? {}, ["decision_context", "args"]),
  ];
  for (const ref of refs) {
    const field = pointerTokens(ref.pointer)[0] ?? "";
    if (!Object.hasOwn(fields, field)) report(ref.path, `${ref.pointer} names no input field`);
  }
  // Every tenant that has the namespace must configure what its policies read; a namespace no
  // tenant has yet needs it in at least one tenant, so a typo is still caught.
  const users = deployment.tenants.filter(({ tenant }) => tenant.namespaces.includes(file.namespace));
  const configured = (path: PropertyKey[], what: string, has: (tenant: TenantConfig) => boolean) => {
    if (users.length > 0) {
      for (const { environment, id, tenant } of users) {
        if (!has(tenant)) report(path, `tenant ${id} (${environment}) has no ${what}`);
      }
    } else if (!deployment.tenants.some(({ tenant }) => has(tenant))) {
      report(path, `no tenant in wrangler.toml has ${what}`);
    }
  };
  const needSetting = (path: PropertyKey[], setting: string) =>
    configured(
      path,
      `setting "${setting}" (settings.${file.namespace}.${setting} or a tenant field)`,
      (tenant) => tenantSetting(tenant, file.namespace, setting) !== undefined,
    );
  referenceRules(file, tool, report);
  for (const [index, policy] of (tool.policies ?? []).entries()) {
    const at = ["policies", index];
    const [kind, rule] = Object.entries(policy)[0] ?? [];
    const field = typeof rule === "string" ? rule : (rule as { field: string }).field;
    if (!Object.hasOwn(fields, field)) report([...at, String(kind)], `"${field}" is not an input field`);
    if ("owned_by_tenant" in policy) {
      configured(
        [...at, "owned_by_tenant"],
        `owns.${field} pattern`,
        (tenant) => tenant.owns[field] !== undefined,
      );
    } else if ("max_from_setting" in policy)
      needSetting([...at, "max_from_setting", "setting"], policy.max_from_setting.setting);
    else if ("waive_approval_below" in policy) {
      needSetting([...at, "waive_approval_below", "setting"], policy.waive_approval_below.setting);
    } else if ("approval_when" in policy && "at_least_setting" in policy.approval_when) {
      needSetting([...at, "approval_when", "at_least_setting"], policy.approval_when.at_least_setting);
    }
  }
  if (tool.approval && tool.side_effect !== "write" && tool.side_effect !== "destructive") {
    report(
      ["approval"],
      `a ${tool.side_effect} tool never waits for a human: approval is for write and destructive tools`,
    );
  }
  if ((tool.side_effect === "write" || tool.side_effect === "destructive") && !tool.dry_run?.trim()) {
    report(
      ["dry_run"],
      `a ${tool.side_effect} tool says what a dry run cannot show: what the sandbox simulates and what only production reveals`,
    );
  }
}

function upstreamRules(
  file: CatalogFile,
  deployment: Deployment,
  report: (path: PropertyKey[], problem: string) => void,
) {
  for (const [name, upstream] of Object.entries(file.upstreams)) {
    for (const environment of ENVIRONMENTS) {
      if (!upstream.base?.[environment] && !deployment.bindings[environment].has(name)) {
        report(
          ["upstreams", name],
          `no ${environment} base: give base.${environment} (a URL), or bind ${name} in [env.${environment}] of wrangler.toml (a service binding or a URL var)`,
        );
      }
    }
    const { credential } = upstream;
    if (upstream.kind !== "mcp" && credential.kind === "none") {
      report(
        ["upstreams", name, "credential", "kind"],
        "none is for an MCP server reached only through a private binding; an HTTP upstream sends proxy_jwt, static_header or static_query",
      );
    }
    if (
      (credential.kind === "static_header" || credential.kind === "static_query") &&
      !deployment.secrets.has(credential.secret)
    ) {
      report(
        ["upstreams", name, "credential", "secret"],
        `secret ${credential.secret} is not listed in secrets.production.example.json; add it so a deploy sets it`,
      );
    }
  }
}

export interface CatalogCheck {
  problems: string[];
  /** The validated declarations, by namespace: what `compile` writes. */
  compiled: CatalogFile[];
  /** What `compile` writes when nothing is wrong: the Worker's module and the editors' schema. */
  outputs: { compiled: string; schema: string; tenants: string } | null;
  /** Each upstream: certified, refuted, stale or only declared, as `check` prints it. */
  standings: UpstreamStanding[];
}

/** Checks every `*.yaml` of `catalogDir` (relative to `root`, or absolute) and returns every problem found. */
export function checkCatalog(root: string, catalogDir = "catalog"): CatalogCheck {
  const deployment = readDeployment(root);
  const problems: string[] = [];
  const compiled: CatalogFile[] = [];
  const located = new Map<string, Located>();
  const specs: ToolSpec[] = [];
  const certified = new Map<string, Record<string, Certification>>();
  const standings: UpstreamStanding[] = [];
  // Every namespace gets the built-in tools, so no declaration may take their names.
  const owners = new Map<string, string>([[readResultPage("").name, "the built-in tools of src/tools"]]);
  // Each namespace's tools and their classes, as written (a broken declaration still names its tool).
  const classes = new Map<string, Map<string, SideEffect | undefined>>();
  // Each namespace's tools and their top-level arguments, as written, for the tenants' tool limits.
  const inputs = new Map<string, Map<string, string[] | undefined>>();
  const directory = resolve(root, catalogDir);
  const files = existsSync(directory)
    ? readdirSync(directory)
        .filter((name) => name.endsWith(".yaml"))
        .sort()
    : [];
  for (const name of files) {
    const label = relative(root, join(directory, name)).split("\\").join("/");
    const report = (path: PropertyKey[], problem: string) =>
      problems.push(`${label}: ${path.length === 0 ? "(file)" : formatPath(path)}: ${problem}`);
    // Merge keys (`<<: *tool`) let a file share a block between tools, as anchors share a schema.
    const document = parseDocument(readFileSync(join(directory, name), "utf8"), { merge: true });
    if (document.errors.length > 0) {
      for (const error of document.errors) report([], `not valid YAML: ${error.message}`);
      continue;
    }
    const raw: unknown = document.toJS();
    draftMarkers(raw, [], report);
    const header = CatalogFileSchema.extend({ tools: z.array(z.unknown()).min(1) }).safeParse(raw);
    if (!header.success) {
      for (const issue of header.error.issues.flatMap((one) => branchIssues(one, raw))) {
        report(issue.path, issue.message);
      }
      continue;
    }
    const namespace = basename(name, ".yaml");
    classes.set(header.data.namespace, new Map(header.data.tools.flatMap(declaredClass)));
    inputs.set(header.data.namespace, new Map(header.data.tools.flatMap(declaredArguments)));
    if (header.data.namespace !== namespace) {
      report(["namespace"], `"${header.data.namespace}" must equal the file's name, "${namespace}"`);
    }
    const tools: ToolDeclaration[] = [];
    const valid: { index: number; tool: ToolDeclaration }[] = [];
    header.data.tools.forEach((entry, index) => {
      const parsed = ToolDeclarationSchema.safeParse(entry);
      if (parsed.success) {
        tools.push(parsed.data);
        valid.push({ index, tool: parsed.data });
      } else {
        for (const issue of parsed.error.issues) report(["tools", index, ...issue.path], issue.message);
      }
    });
    const file: CatalogFile = { ...header.data, tools };
    const certifications = certificationsOf(root, directory, file, raw, problems);
    certified.set(file.namespace, certifications);
    standings.push(...standingsOf(file, certifications));
    upstreamRules(file, deployment, report);
    undecidedKeyProblems(file, report);
    defaultToolsRules(file, report);
    const pins = readPins(directory, namespace);
    const pinsLabel = relative(root, pinsFileOf(directory, namespace)).split("\\").join("/");
    for (const { index, tool } of valid) {
      const at = (path: PropertyKey[], problem: string) => report(["tools", index, ...path], problem);
      toolRules(file, tool, deployment, at);
      credentialRules(tool, at);
      remoteToolRules(namespace, tool, pins, pinsLabel, at);
      const owner = owners.get(tool.name);
      if (owner !== undefined) {
        at(
          ["name"],
          `"${tool.name}" is already a tool of ${owner}; tool names are unique across the catalog`,
        );
        continue;
      }
      owners.set(tool.name, label);
      try {
        const schemas = evaluateSchemas(schemaSources(tool));
        const spec = declaredTool(file, tool, () => schemas, certifications);
        keyToolRules(file, tool, spec, at);
        specs.push(spec);
        located.set(tool.name, { file: label, index, declaration: tool, spec });
      } catch (error) {
        if (!(error instanceof SchemaError)) throw error;
        at([error.at], `not a JSON Schema the catalog can express: ${error.message}`);
      }
    }
    specs.push(readResultPage(file.namespace));
    compiled.push(file);
  }
  const checked = catalogProblems(specs);
  for (const problem of checked.problems) problems.push(locate(problem, located));
  problems.push(
    ...deployment.problems,
    ...repeatEffectsProblems(deployment.tenants, classes),
    ...toolLimitsProblems(deployment.tenants, inputs),
    ...approversProblems(root, deployment.tenants, specs),
    ...profileToolsOfDeployment(deployment.tenants, classes),
  );
  if (problems.length > 0) return { problems, compiled: [], outputs: null, standings };
  // The served catalog's version and its tools', hashed here as the Worker's Catalog would hash them.
  const served = new Catalog(checked.byNamespace).all();
  const hash = (text: string) => createHash("sha256").update(text).digest("hex");
  const versions = served.map((tool) => toolVersionWith(tool, hash));
  const version = catalogVersionOfDigest(hash(catalogContract(served, versions)));
  const toolVersions = Object.fromEntries(
    served.map((tool, index) => [`${tool.namespace}.${tool.name}`, versions[index] as ToolVersion]),
  );
  return {
    problems,
    compiled,
    standings,
    outputs: {
      compiled: compiledCatalogModule(compiled, { version, tools: toolVersions }, certified),
      schema: catalogJsonSchema(),
      tenants: compiledTenantsModule(deployment.tables),
    },
  };
}

/**
 * An upstream is HTTP or MCP, and zod reports a value neither accepts as one "Invalid input". The
 * branch its `kind` chose is the one whose problems the author needs, each at its own field.
 */
function branchIssues(issue: z.core.$ZodIssue, raw: unknown): { path: PropertyKey[]; message: string }[] {
  if (issue.code !== "invalid_union" || issue.errors.length !== 2) return [issue];
  let value: unknown = raw;
  for (const key of issue.path) value = (value as Record<PropertyKey, unknown> | undefined)?.[key];
  const kind = (value as { kind?: unknown } | undefined)?.kind;
  const chosen = issue.errors[kind === "mcp" ? 1 : 0] ?? [];
  return chosen.map((inner) => ({ path: [...issue.path, ...inner.path], message: inner.message }));
}

/** A declared tool's name and side-effect class, read before its declaration is validated. */
function declaredClass(entry: unknown): [string, SideEffect | undefined][] {
  if (typeof entry !== "object" || entry === null) return [];
  const { name, side_effect } = entry as { name?: unknown; side_effect?: unknown };
  if (typeof name !== "string") return [];
  const known = SIDE_EFFECTS.find((kind) => kind === side_effect);
  return [[name, known]];
}

/** A declared tool's name and top-level argument names, read before its declaration is validated. */
function declaredArguments(entry: unknown): [string, string[] | undefined][] {
  if (typeof entry !== "object" || entry === null) return [];
  const { name, input } = entry as { name?: unknown; input?: { properties?: unknown } };
  if (typeof name !== "string") return [];
  const properties = input?.properties;
  const known = typeof properties === "object" && properties !== null ? Object.keys(properties) : undefined;
  return [[name, known]];
}

function locate(problem: CatalogProblem, located: ReadonlyMap<string, Located>): string {
  const where = located.get(problem.tool);
  if (!where) return `src/tools: ${problem.tool}: ${problem.message}`;
  // A namespace's default set is written beside its tools, not in one of them.
  if (problem.field === "default_tools") return `${where.file}: default_tools: ${problem.message}`;
  const field = FIELD_PATHS[problem.field] ?? problem.field;
  return `${where.file}: tools[${where.index}].${field}: ${problem.message}`;
}

/** The JSON Schema editors use for catalog files, from the one zod schema of the format. */
function catalogJsonSchema(): string {
  const schema = z.toJSONSchema(CatalogFileSchema, { io: "input", target: "draft-2020-12" });
  return `${JSON.stringify(
    {
      ...schema,
      $id: "https://edge-tool-proxy.dev/catalog/schema.json",
      title: "Tool declarations of one namespace",
    },
    null,
    2,
  )}\n`;
}
