import type * as z from "zod";
import { lazily } from "../core/lazily";
import type { MaskRule } from "../shaping/mask";
import type { Certification } from "./certification";
import { declaredFacts } from "./decision-facts";
import type { CatalogFile, Expected, ExpectedValue, ToolDeclaration } from "./declaration";
import {
  DEFAULT_MAX_RESULT_BYTES,
  type InputSchema,
  type RemoteTool,
  type StaticCredential,
  type ToolSpec,
  type UpstreamRequest,
  type Verdict,
} from "./define-tool";
import { DEFAULT_EFFECT_WINDOW_MS, defaultEffect } from "./effect-identity";
import { keyPromiseOf } from "./key-promise";
import { compilePolicy } from "./policy-vocabulary";
import { settleReadOf } from "./settle-read";
import {
  fillPath,
  fillTemplate,
  fillText,
  pathValueProblem,
  placeholders,
  resolvePointer,
  valueAtPath,
} from "./templates";

/**
 * Turns a namespace declared as data (catalog/<namespace>.yaml) into ToolSpecs, the same shape
 * `defineTool` gives code tools, so both pass the same `loadCatalog` rules and the same pipeline.
 *
 * The input and output schemas arrive as zod, written as code by `npm run tools -- compile`
 * (src/generated/catalog.ts, scripts/tools/zod-source.ts): one validation engine, so a model
 * gets the same field-level problems and did-you-mean hints whichever way a tool was written, and
 * no JSON Schema is converted when an isolate starts.
 */

type Args = Record<string, unknown>;

/** A declared tool's schemas, built by the compiled catalog module. */
export interface DeclaredSchemas {
  /** Strict at every depth: an unknown argument is refused, never silently dropped. */
  input: InputSchema;
  /** The whitelist: fields it does not name are stripped (an upstream may add fields). */
  output: z.ZodType;
}

/** A declared tool as the Worker keeps it: its JSON Schemas became code (DeclaredSchemas). */
export type CompiledDeclaration = Omit<ToolDeclaration, "input" | "output"> & {
  output: Omit<ToolDeclaration["output"], "schema">;
};

/**
 * One namespace as `compile` wrote it: the checked declaration and, by tool name, a function that
 * builds the tool's schemas (called on the tool's first use, not when the isolate starts).
 */
export interface DeclaredNamespace {
  file: Omit<CatalogFile, "tools"> & { tools: CompiledDeclaration[] };
  /** What `npm run tools -- certify` measured of each upstream, judged against its declaration at compile. */
  certifications?: Record<string, Certification>;
  schemas: Record<string, () => DeclaredSchemas>;
}

function requestOf(
  tool: CompiledDeclaration,
  file: DeclaredNamespace["file"],
): (args: Args) => UpstreamRequest {
  const declared = tool.request;
  if ("tool" in declared) {
    // What is stored under the key and sent again on a resend: the server's tool and the arguments.
    const server = file.upstreams[declared.upstream];
    const path = server?.kind === "mcp" ? server.path : "/mcp";
    return (args) => ({ method: "POST", path, body: { name: declared.tool, arguments: args } });
  }
  const { method, path, query, body, headers } = declared;
  return (args) => {
    const request: UpstreamRequest = { method, path: fillPath(path, args) };
    if (query) {
      const filled: Record<string, string> = {};
      for (const [name, value] of Object.entries(query)) {
        const resolved = typeof value === "string" ? value : resolvePointer(args, value.arg);
        if (resolved !== undefined && resolved !== null) filled[name] = String(resolved);
      }
      request.query = filled;
    }
    if (body !== undefined) request.body = fillTemplate(body, args);
    if (headers) request.headers = { ...headers };
    return request;
  };
}

/**
 * The input schema, refusing a value that cannot fill its field's placeholder in the request path
 * (pathValueProblem), as a problem at that field: checked with the arguments, before any stage acts.
 */
function withPathFields(input: InputSchema, fields: readonly string[]): InputSchema {
  if (fields.length === 0) return input;
  return input.superRefine((args, ctx) => {
    for (const field of fields) {
      const problem = pathValueProblem(args[field]);
      if (problem !== null)
        ctx.addIssue({ code: "custom", path: [field], message: problem, input: args[field] });
    }
  });
}

function expectedValue(expected: ExpectedValue, args: Args, result: unknown): unknown {
  if ("arg" in expected) return resolvePointer(args, expected.arg);
  if ("result" in expected) return resolvePointer(result, expected.result);
  return expected.value;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Why the observed value at `path` is not what was expected, or null when it is. */
function mismatchAt(path: string, expected: Expected, args: Args, result: unknown, observed: unknown) {
  const seen = valueAtPath(observed, path);
  if (!("contains" in expected)) {
    const want = expectedValue(expected, args, result);
    return same(seen, want) ? null : `${path} is ${JSON.stringify(seen)}, not ${JSON.stringify(want)}`;
  }
  const wanted = Object.entries(expected.contains).map(
    ([field, value]) => [field, expectedValue(value, args, result)] as const,
  );
  const found =
    Array.isArray(seen) &&
    seen.some((item) => wanted.every(([field, want]) => same(valueAtPath(item, field), want)));
  return found ? null : `${path} holds no ${JSON.stringify(Object.fromEntries(wanted))}`;
}

/**
 * The postcondition's verdict: every expected path of the read-back holds what was claimed. A
 * read that found nothing, or any mismatch, is a silent failure (the upstream said yes, the world
 * says otherwise) unless the declaration calls a mismatch a partial success; its messages, when
 * declared, speak of the tool's own things (`{args.…}`, `{result.…}`).
 */
function verifierOf(tool: string, postcondition: NonNullable<CompiledDeclaration["postcondition"]>) {
  const { expect, on_missing, on_mismatch } = postcondition;
  return (args: Args, result: unknown, observed: unknown): Verdict => {
    const values = { args, result };
    if (observed === null) {
      return {
        ok: false,
        code: "silent_failure",
        message: on_missing
          ? fillText(on_missing.message, values)
          : `${tool} was confirmed, but reading it back found nothing.`,
      };
    }
    const mismatches = Object.entries(expect).flatMap(([path, expected]) => {
      const mismatch = mismatchAt(path, expected, args, result, observed);
      return mismatch === null ? [] : [mismatch];
    });
    if (mismatches.length === 0) return { ok: true };
    return {
      ok: false,
      code: on_mismatch?.verdict ?? "silent_failure",
      message: on_mismatch
        ? fillText(on_mismatch.message, values)
        : `${tool} was confirmed, but reading it back shows ${mismatches.join("; ")}.`,
    };
  };
}

/** The MCP server a remote tool is declared on, as the dispatch needs it. */
function remoteOf(file: DeclaredNamespace["file"], tool: CompiledDeclaration): RemoteTool | undefined {
  const request = tool.request;
  const upstream = file.upstreams[request.upstream];
  if (!("tool" in request) || upstream?.kind !== "mcp") return undefined;
  const { credential, idempotency } = upstream;
  return {
    tool: request.tool,
    pin: request.pin,
    server: {
      name: request.upstream,
      path: upstream.path,
      protocol: upstream.protocol,
      audience:
        credential.kind === "proxy_jwt" ? (credential.audience ?? request.upstream.toLowerCase()) : null,
      carriers: idempotency.carriers,
      honoured: idempotency.honoured,
      definitions_max_age_ms: upstream.definitions_max_age_s * 1_000,
    },
  };
}

function credentialOf(file: DeclaredNamespace["file"], upstream: string): StaticCredential | undefined {
  const credential = file.upstreams[upstream]?.credential;
  if (credential?.kind === "static_query") return credential;
  if (credential?.kind !== "static_header") return undefined;
  return { ...credential, prefix: credential.prefix ?? "" };
}

/**
 * One declared tool as a ToolSpec, with the schemas compiled from its declaration: `schemas` builds
 * them on the first read of `input` or `output`, once.
 */
export function declaredTool(
  file: DeclaredNamespace["file"],
  tool: CompiledDeclaration,
  schemas: () => DeclaredSchemas,
  certifications: DeclaredNamespace["certifications"] = {},
): ToolSpec {
  const built = lazily(schemas);
  const pathFields = "path" in tool.request ? placeholders(tool.request.path) : [];
  const input = lazily(() => withPathFields(built().input, pathFields));
  const { namespace } = file;
  const postcondition = tool.postcondition;
  const context = tool.decision_context;
  const freshness = tool.freshness;
  const credential = credentialOf(file, tool.request.upstream);
  const upstream = file.upstreams[tool.request.upstream];
  const remote = remoteOf(file, tool);
  return {
    builtin: null,
    name: tool.name,
    namespace,
    version: tool.version,
    title: tool.title,
    side_effect: tool.side_effect,
    description: tool.description,
    get input() {
      return input();
    },
    get output() {
      return built().output;
    },
    upstream: {
      binding: tool.request.upstream,
      ...(upstream?.base ? { base: upstream.base } : {}),
      request: requestOf(tool, file),
      ...(credential ? { credential } : {}),
      ...(remote ? { remote } : {}),
      idempotency: keyPromiseOf(upstream, certifications[tool.request.upstream]),
    },
    settle: tool.settle ? settleReadOf(tool.settle) : null,
    timeout_ms: tool.timeout_ms,
    policy: (tool.policies ?? []).map((policy) => compilePolicy(namespace, policy)),
    open_world: tool.open_world ?? false,
    sensitive: (tool.output.sensitive ?? {}) as Record<string, MaskRule>,
    sensitive_args: (tool.sensitive_args ?? {}) as Record<string, MaskRule>,
    untrusted: tool.output.untrusted ?? [],
    trusted_text: tool.output.trusted_text ?? {},
    max_result_bytes: tool.output.max_result_bytes ?? DEFAULT_MAX_RESULT_BYTES,
    observe: postcondition
      ? {
          tool: postcondition.tool,
          args: (args, result) => fillTemplate(postcondition.args, args, result) as Args,
          verify: verifierOf(tool.name, postcondition),
          ...(postcondition.answer_by_key
            ? { answer_by_key: (key: string) => fillPath(postcondition.answer_by_key ?? "", { key }) }
            : {}),
        }
      : null,
    no_postcondition: tool.no_postcondition ?? null,
    freshness: freshness
      ? {
          resource: (result) => fillPath(freshness.resource, (result ?? {}) as Args),
          version: (result) => Number(valueAtPath(result, freshness.version_field)),
        }
      : null,
    decision_context: context
      ? {
          tool: context.tool,
          args: (args) => fillTemplate(context.args, args) as Args,
          facts: declaredFacts(context),
        }
      : null,
    dry_run: tool.dry_run ?? null,
    effect: tool.effect
      ? {
          fields: tool.effect.identity,
          window_ms:
            tool.effect.window_s === undefined ? DEFAULT_EFFECT_WINDOW_MS : tool.effect.window_s * 1_000,
          ...(tool.effect.per_user ? { per_user: true } : {}),
        }
      : defaultEffect(tool.side_effect),
    value: tool.value ? { ...tool.value, subject: tool.value.subject ?? null } : null,
    approval_sla_ms: tool.approval?.sla_s === undefined ? null : tool.approval.sla_s * 1_000,
    approval_roles: tool.approval?.roles ?? [],
    listed_by_default: file.default_tools?.includes(tool.name) ?? false,
    deprecated: tool.deprecated ?? null,
    declared: {
      request: tool.request,
      policies: tool.policies ?? [],
      postcondition: tool.postcondition ?? null,
      freshness: tool.freshness ?? null,
      decision_context: tool.decision_context ?? null,
      settle: tool.settle ?? null,
    },
  };
}

/** Every tool of every declared namespace, built once per isolate when the catalog loads. */
export function declaredTools(namespaces: readonly DeclaredNamespace[]): ToolSpec[] {
  return namespaces.flatMap(({ file, schemas, certifications }) =>
    file.tools.map((tool) => {
      const compiled = schemas[tool.name];
      // compile writes both together; a tool without schemas is a hand-edited generated file.
      if (!compiled) throw new Error(`the compiled catalog has no schemas for ${tool.name}`);
      return declaredTool(file, tool, compiled, certifications);
    }),
  );
}
