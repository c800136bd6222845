import * as z from "zod";
import type { Catalog } from "../catalog/catalog";
import type { ToolSpec } from "../catalog/define-tool";
import { lazily } from "../core/lazily";
import { assertNever } from "../wire/envelope";
import { type SpecFormat, SpecFormatSchema } from "../wire/requests";
import { type AnthropicTool, toAnthropicTool } from "./anthropic";
import { type GeminiFunctionDeclaration, toGeminiFunctionDeclaration } from "./gemini";
import { type McpTool, toMcpTool } from "./mcp";
import { type NeutralTool, toNeutralTool } from "./neutral";
import { type OpenAiResponsesTool, type OpenAiTool, toOpenAiResponsesTool, toOpenAiTool } from "./openai";
import { estimateTokens, TOKEN_ESTIMATE_METHOD } from "./token-estimate";

/** The tool object each format produces. */
export interface SpecOf {
  openai: OpenAiTool;
  "openai-responses": OpenAiResponsesTool;
  anthropic: AnthropicTool;
  gemini: GeminiFunctionDeclaration;
  mcp: McpTool;
  jsonschema: NeutralTool;
}
export type AnySpec = SpecOf[SpecFormat];

export const tokenEstimateSchema = lazily(() =>
  z.object({
    total: z.number().int().describe("Approximate tokens of `tools` as sent to a model."),
    per_tool: z.record(z.string(), z.number().int()).describe("The same estimate for each tool, by name."),
    method: z.string().describe("How the estimate is computed."),
  }),
);

/** What `GET /v1/tools` answers in `data`. */
export const namespaceSpecsSchema = lazily(() =>
  z.object({
    namespace: z.string(),
    format: SpecFormatSchema,
    tools: z
      .array(z.record(z.string(), z.unknown()))
      .describe("The tool specs in the requested format, ready to paste."),
    token_estimate: tokenEstimateSchema(),
  }),
);

export interface NamespaceSpecs<F extends SpecFormat = SpecFormat> {
  namespace: string;
  format: F;
  tools: SpecOf[F][];
  token_estimate: z.infer<ReturnType<typeof tokenEstimateSchema>>;
}

export function specFor(tool: ToolSpec, format: SpecFormat): AnySpec {
  switch (format) {
    case "openai":
      return toOpenAiTool(tool);
    case "openai-responses":
      return toOpenAiResponsesTool(tool);
    case "anthropic":
      return toAnthropicTool(tool);
    case "gemini":
      return toGeminiFunctionDeclaration(tool);
    case "mcp":
      return toMcpTool(tool);
    case "jsonschema":
      return toNeutralTool(tool);
    default:
      return assertNever(format);
  }
}

/**
 * Catalogs are fixed for an isolate's lifetime and turning zod into JSON Schema is not free on
 * Workers (no JIT), so each namespace's specs are built once per format and kept.
 */
let cache = new WeakMap<Catalog, Map<string, NamespaceSpecs>>();

/** Forgets every namespace's specs built here, as a new deploy's isolate starts without them. */
export function forgetNamespaceSpecs(): void {
  cache = new WeakMap();
}

/**
 * Every tool of one namespace in one format, with the estimated token cost of pasting them into a
 * prompt. An unknown namespace yields no tools; callers decide whether that is `not_found`.
 *
 * @example
 * specsFor(catalog, "support", "openai").tools; // ready for `tools:` of a Chat Completions request
 * specsFor(catalog, "support", "gemini").tools; // ready for `tools: [{ functionDeclarations }]`
 */
export function specsFor<F extends SpecFormat>(
  catalog: Catalog,
  namespace: string,
  format: F,
): NamespaceSpecs<F> {
  let byKey = cache.get(catalog);
  if (!byKey) {
    byKey = new Map();
    cache.set(catalog, byKey);
  }
  const key = `${namespace}\u0000${format}`;
  let specs = byKey.get(key);
  if (!specs) {
    const tools = catalog.tools(namespace);
    const built = tools.map((tool) => specFor(tool, format));
    const perTool: Record<string, number> = {};
    tools.forEach((tool, index) => {
      perTool[tool.name] = estimateTokens(built[index]);
    });
    specs = {
      namespace,
      format,
      tools: built,
      token_estimate: { total: estimateTokens(built), per_tool: perTool, method: TOKEN_ESTIMATE_METHOD },
    };
    byKey.set(key, specs);
  }
  return specs as NamespaceSpecs<F>;
}

/** Each tool's spec per format, built once: a run's own set is assembled from them. */
const perTool = new WeakMap<ToolSpec, Map<SpecFormat, AnySpec>>();

/**
 * The specs of a run's own tools (its opened subset, or more), in one format, with their
 * estimated token cost: what a run opened with a subset lists instead of its whole namespace.
 */
export function specsOfTools<F extends SpecFormat>(
  namespace: string,
  tools: readonly ToolSpec[],
  format: F,
): NamespaceSpecs<F> {
  const built = tools.map((tool) => {
    let byFormat = perTool.get(tool);
    if (!byFormat) {
      byFormat = new Map();
      perTool.set(tool, byFormat);
    }
    let spec = byFormat.get(format);
    if (!spec) {
      spec = specFor(tool, format);
      byFormat.set(format, spec);
    }
    return spec as SpecOf[F];
  });
  const perToolTokens: Record<string, number> = {};
  tools.forEach((tool, index) => {
    perToolTokens[tool.name] = estimateTokens(built[index]);
  });
  return {
    namespace,
    format,
    tools: built,
    token_estimate: { total: estimateTokens(built), per_tool: perToolTokens, method: TOKEN_ESTIMATE_METHOD },
  };
}
