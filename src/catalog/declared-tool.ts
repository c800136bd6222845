import * as z from "zod";
import type { MaskRule } from "../shaping/mask";
import type { CatalogFile, Expected, ToolDeclaration } from "./declaration";
import {
  DEFAULT_MAX_RESULT_BYTES,
  type DecisionFact,
  type InputSchema,
  type StaticHeaderCredential,
  type ToolSpec,
  type UpstreamRequest,
  type Verdict,
} from "./define-tool";
import { compilePolicy } from "./policy-vocabulary";
import { fillPath, fillTemplate, resolvePointer, valueAtPath } from "./templates";

/**
 * Turns a namespace declared as data (catalog/<namespace>.yaml, compiled to JSON at build time)
 * into ToolSpecs, the same shape `defineTool` gives code tools, so both pass the same `loadCatalog`
 * rules and the same pipeline.
 *
 * Why zod 4's `z.fromJSONSchema` rather than a JSON Schema validator such as
 * @cfworker/json-schema: one validation engine. Declared arguments are checked by the same zod
 * parse as code tools' (src/pipeline/validate.ts), so a model gets the same field-level problems
 * and did-you-mean hints whichever way a tool was written, and the catalog's structural rules
 * (strict objects, described fields, classified free text) read the same zod tree.
 */

type JsonSchema = Record<string, unknown>;
type Args = Record<string, unknown>;

/**
 * Every object of the input refuses unknown fields, at any depth: a misspelt argument is a problem
 * with a did-you-mean, never silently dropped. A declaration cannot loosen this.
 */
function strictInputSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strictInputSchema);
  if (typeof schema !== "object" || schema === null) return schema;
  const copy: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    // `properties` maps names to schemas (none of which is itself keyed "properties").
    copy[key] =
      key === "properties" && typeof value === "object" && value !== null
        ? Object.fromEntries(Object.entries(value).map(([name, child]) => [name, strictInputSchema(child)]))
        : strictInputSchema(value);
  }
  if (copy.type === "object") copy.additionalProperties = false;
  return copy;
}

/**
 * The output whitelist: fields the schema does not name are stripped, not refused (an upstream
 * may add fields; the model still sees only what is listed). `z.fromJSONSchema` lets unknown
 * fields through an object without `additionalProperties: false`, so objects are rebuilt stripping.
 */
function stripUnknown(schema: z.ZodType): z.ZodType {
  const described = (rebuilt: z.ZodType) =>
    schema.description === undefined ? rebuilt : rebuilt.describe(schema.description);
  if (schema instanceof z.ZodObject) {
    const shape = Object.fromEntries(
      Object.entries(schema.shape).map(([name, child]) => [name, stripUnknown(child as z.ZodType)]),
    );
    return described(z.object(shape));
  }
  if (schema instanceof z.ZodArray) return described(z.array(stripUnknown(schema.element as z.ZodType)));
  if (schema instanceof z.ZodOptional)
    return described(stripUnknown(schema.unwrap() as z.ZodType).optional());
  if (schema instanceof z.ZodNullable)
    return described(stripUnknown(schema.unwrap() as z.ZodType).nullable());
  return schema;
}

function buildInput(declared: JsonSchema): InputSchema {
  const schema = z.fromJSONSchema(strictInputSchema(declared) as z.core.JSONSchema.JSONSchema);
  if (!(schema instanceof z.ZodObject)) throw new Error("input must be a JSON Schema of type object");
  return schema as InputSchema;
}

function buildOutput(declared: JsonSchema): z.ZodType {
  return stripUnknown(z.fromJSONSchema(declared as z.core.JSONSchema.JSONSchema));
}

function requestOf(tool: ToolDeclaration): (args: Args) => UpstreamRequest {
  const { method, path, query, body, headers } = tool.request;
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

function expectedValue(expected: Expected, args: Args, result: unknown): unknown {
  if ("arg" in expected) return resolvePointer(args, expected.arg);
  if ("result" in expected) return resolvePointer(result, expected.result);
  return expected.value;
}

/**
 * The postcondition's verdict: every expected path of the read-back equals what was claimed. A
 * read that found nothing, or any mismatch, is a silent failure: the upstream said yes, the world
 * says otherwise.
 */
function verifierOf(tool: string, expect: Record<string, Expected>) {
  return (args: Args, result: unknown, observed: unknown): Verdict => {
    if (observed === null) {
      return {
        ok: false,
        code: "silent_failure",
        message: `${tool} was confirmed, but reading it back found nothing.`,
      };
    }
    const mismatches = Object.entries(expect).flatMap(([path, expected]) => {
      const want = expectedValue(expected, args, result);
      const seen = valueAtPath(observed, path);
      return JSON.stringify(seen) === JSON.stringify(want)
        ? []
        : [`${path} is ${JSON.stringify(seen)}, not ${JSON.stringify(want)}`];
    });
    return mismatches.length === 0
      ? { ok: true }
      : {
          ok: false,
          code: "silent_failure",
          message: `${tool} was confirmed, but reading it back shows ${mismatches.join("; ")}.`,
        };
  };
}

function factValue(value: unknown): string {
  if (value === undefined || value === null) return "unknown";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function credentialOf(file: CatalogFile, upstream: string): StaticHeaderCredential | undefined {
  const credential = file.upstreams[upstream]?.credential;
  if (credential?.kind !== "static_header") return undefined;
  return { ...credential, prefix: credential.prefix ?? "" };
}

/** One declared tool as a ToolSpec. Throws on a JSON Schema zod cannot read; `check` reports it. */
export function declaredTool(file: CatalogFile, tool: ToolDeclaration): ToolSpec {
  const { namespace } = file;
  const postcondition = tool.postcondition;
  const context = tool.decision_context;
  const freshness = tool.freshness;
  const credential = credentialOf(file, tool.request.upstream);
  return {
    name: tool.name,
    namespace,
    version: tool.version,
    title: tool.title,
    side_effect: tool.side_effect,
    description: tool.description,
    input: buildInput(tool.input),
    output: buildOutput(tool.output.schema),
    upstream: {
      binding: tool.request.upstream,
      request: requestOf(tool),
      ...(credential ? { credential } : {}),
    },
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
          verify: verifierOf(tool.name, postcondition.expect),
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
          facts: (_args, observed): DecisionFact[] =>
            context.facts.map((fact) => ({
              label: fact.label,
              value: factValue(valueAtPath(observed, fact.path)),
            })),
        }
      : null,
    dry_run: tool.dry_run ?? null,
  };
}

/** Every tool of every declared namespace, built once per isolate when the catalog loads. */
export function declaredTools(files: readonly CatalogFile[]): ToolSpec[] {
  return files.flatMap((file) => file.tools.map((tool) => declaredTool(file, tool)));
}
