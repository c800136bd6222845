import * as z from "zod";
import { lazily } from "../core/lazily";
import { runLimitsSchema } from "./run-status";
import { scenarioSchema } from "./scenario";

/**
 * What callers send to the REST routes besides a tool call: the body of `POST /v1/runs` and the
 * query strings of the trace, result-page and tool-spec routes. The routes validate with these and
 * the OpenAPI document derives their parameters from them.
 */

/** A tool call's body, and any JSON body of the API: at most 64 KiB. */
export const MAX_CALL_BODY_BYTES = 64 * 1024;

/** A subset of tools as a run or an agent profile names it: tool names, or `namespace.tool`. */
export const runToolsSubsetSchema = lazily(() =>
  z
    .array(
      z
        .string()
        .regex(
          /^(?:[a-z][a-z0-9_]*\.)?[a-z][a-z0-9_]*$/,
          "a tool name such as lookup_order, or namespace.tool such as shipping.lookup_shipment",
        ),
    )
    .min(1, "name at least one tool, or leave tools out for the whole namespace")
    .max(30, "at most 30 tools; find_tools reaches the rest"),
);

/** `POST /v1/runs/{run_id}/tools`: granted tools a REST caller adds to its run. */
export const addRunToolsBodySchema = lazily(() =>
  z.strictObject({
    tools: runToolsSubsetSchema().describe(
      "Tools to add to the run, as find_tools names them: they are listed by GET /v1/tools and callable directly from now on.",
    ),
  }),
);

/** `POST /v1/runs`: the namespace, limits and fault scenario of a new run. */
export const openRunBodySchema = lazily(() =>
  z.strictObject({
    namespace: z
      .string()
      .optional()
      .describe(
        "The tool namespace the run may use, such as support. Required with a tenant key; an agent key's profile names it.",
      ),
    limits: runLimitsSchema()
      .partial()
      .optional()
      .describe("Budgets for this run, within the tenant's ceilings."),
    scenario: scenarioSchema().optional(),
    tools: runToolsSubsetSchema()
      .optional()
      .describe(
        'Open the run with only these tools, such as ["lookup_order", "shipping.lookup_shipment"]: names of tools the tenant grants, qualified as namespace.tool when two namespaces share a name. The run lists only them, plus find_tools and use_tool to reach the rest of its grants. Omit for the namespace\'s tools.',
      ),
    task_key: z
      .string()
      .min(1)
      .max(200, "a task key has at most 200 characters")
      .regex(/^[^\p{C}]+$/u, "a task key holds printable characters only (no control or format characters)")
      .optional()
      .describe(
        "Your id for the task this run is for, such as a ticket id and attempt. Opening again with the same key and the same body answers the same run (reused: true) within its retention; the same key with another body is a conflict. Send a new key for a new intent.",
      ),
  }),
);

/** `GET /v1/runs/{run_id}/results/{handle}?cursor=`: which page of a large result. */
export const resultPageQuerySchema = lazily(() =>
  z.strictObject({
    cursor: z
      .string()
      .regex(/^\d{1,6}$/, "not a non-negative integer")
      .default("0")
      .describe("The page to read: 0, then each page's next_cursor."),
  }),
);

/** `GET /v1/runs/{run_id}/trace?cursor=&limit=&format=`: a page of the trace, or the whole as an export. */
export const traceQuerySchema = lazily(() =>
  z.strictObject({
    cursor: z
      .string()
      .regex(/^\d{1,15}$/, "not a cursor this endpoint gave")
      .default("0")
      .describe("Where the page starts: omit for the first, then each page's next_cursor."),
    limit: z
      .string()
      .regex(/^\d{1,4}$/, "not a whole number")
      .default("100")
      .transform(Number)
      .pipe(z.number().int().min(1).max(1000))
      .describe("Entries per page, 1 to 1000; 100 when omitted."),
    format: z
      .enum(["otlp"])
      .optional()
      .describe(
        "otlp: the whole trace as OpenTelemetry JSON spans, streamed; cursor and limit do not apply.",
      ),
  }),
);

/** Which formats `GET /v1/tools` writes tool specs in. */
export const SPEC_FORMATS = [
  "openai",
  "openai-responses",
  "anthropic",
  "gemini",
  "mcp",
  "jsonschema",
] as const;
export const SpecFormatSchema = z.enum(SPEC_FORMATS);
export type SpecFormat = z.infer<typeof SpecFormatSchema>;

/** `GET /v1/tools?namespace=&format=`: whose tools, in which format. */
export const toolsQuerySchema = lazily(() =>
  z.strictObject({
    namespace: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The namespace whose tools to list, such as support. A run token may omit it: its own namespace.",
      ),
    format: SpecFormatSchema.default("jsonschema").describe(
      "openai (Chat Completions function tools, strict), openai-responses (Responses API function tools, strict), anthropic (input_schema), gemini (functionDeclarations), mcp (MCP Tool objects) or jsonschema (neutral).",
    ),
  }),
);
