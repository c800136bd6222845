import * as z from "zod";
import type { ToolSpec } from "../catalog/define-tool";
import { ResultPageSchema } from "../tools/builtins";
import { ApprovalRecordSchema, ApprovalSummarySchema } from "../wire/approval";
import { ApprovalDecisionSchema, ApprovalDetailSchema, ApprovalListSchema } from "../wire/approval-answers";
import { AuditPageSchema } from "../wire/audit";
import { ValueUsageReportSchema } from "../wire/effects";
import { envelopeSchema } from "../wire/envelope";
import { HealthSchema } from "../wire/health";
import { MetricsReportSchema } from "../wire/metrics";
import { RunOpenedSchema } from "../wire/run-open";
import { runStatusSchema } from "../wire/run-status";
import { RunListSchema, RunSummarySchema } from "../wire/run-summary";
import { RunTraceSchema } from "../wire/run-trace";
import { traceEntrySchema } from "../wire/trace-entry";
import { namespaceSpecsSchema } from "./formats";
import type { JsonSchema } from "./json-schema";

/**
 * The payloads a success envelope carries in `data`, by the component name the OpenAPI document
 * gives them. Each is the zod schema its TypeScript type is inferred from (src/wire/), so the
 * document, the type and the test that parses real answers (test/workerd/openapi.test.ts) cannot drift.
 */
export const DATA_COMPONENTS = {
  Health: HealthSchema,
  RunOpened: RunOpenedSchema,
  RunStatus: runStatusSchema(),
  RunTrace: RunTraceSchema,
  RunList: RunListSchema,
  ResultPage: ResultPageSchema,
  ApprovalList: ApprovalListSchema,
  ApprovalDetail: ApprovalDetailSchema,
  ApprovalDecision: ApprovalDecisionSchema,
  NamespaceSpecs: namespaceSpecsSchema(),
  MetricsReport: MetricsReportSchema,
  ValueUsageReport: ValueUsageReportSchema,
  AuditPage: AuditPageSchema,
} as const satisfies Record<string, z.ZodType>;
export type DataComponent = keyof typeof DATA_COMPONENTS;

/**
 * A tool call's `data` when the shaped result is larger than the tool's `max_result_bytes`: a
 * summary and a handle instead of the result (src/machine/shape.ts, src/shaping/cap.ts). The
 * pages are read with `read_result_page` or `GET /v1/runs/{run_id}/results/{handle}`.
 * test/workerd/openapi.test.ts parses a real large answer with it and checks the summary against its type.
 */
export const LargeResultSchema = z.strictObject({
  handle: z.string().describe("The result's handle, for read_result_page or GET .../results/{handle}."),
  summary: z.strictObject({
    total_bytes: z.number().int().nonnegative(),
    list_path: z
      .string()
      .nullable()
      .describe(
        'Where the paged list sits in the result ("" for a top-level list); null when pages are JSON text.',
      ),
    total_items: z.number().int().nonnegative().nullable(),
    first_items: z.array(z.unknown()),
    pages: z.number().int().nonnegative(),
  }),
  partial: z
    .unknown()
    .describe("The result with its paged list emptied; null when paged as text or still too large."),
  next_step: z.string().describe("What to call to read the pages."),
});

/** Schemas several payloads contain: written once as components and referenced from the others. */
const SHARED_COMPONENTS = {
  Envelope: envelopeSchema(),
  TraceEntry: traceEntrySchema(),
  ApprovalRecord: ApprovalRecordSchema,
  ApprovalSummary: ApprovalSummarySchema,
  RunSummary: RunSummarySchema,
  LargeResult: LargeResultSchema,
} as const satisfies Record<string, z.ZodType>;

const pascal = (name: string) =>
  name
    .split(/[^A-Za-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");

/** A tool name and what its successful calls can carry in `data`, as component names. */
export interface ToolAnswer {
  tool: string;
  namespaces: string[];
  /** The components of its outputs: one, unless namespaces define the same name differently. */
  outputs: string[];
}

/**
 * The outputs of the catalog's tools as components. A tool whose output is already a component
 * (read_result_page's ResultPage) refers to it; the others are named after the tool
 * (`LookupOrderOutput`), with the namespace in front when two namespaces' same-named tools differ.
 */
export function toolOutputComponents(tools: readonly ToolSpec[]): {
  schemas: Map<string, z.ZodType>;
  answers: ToolAnswer[];
} {
  const named = new Map<z.ZodType, string>(
    Object.entries({ ...SHARED_COMPONENTS, ...DATA_COMPONENTS }).map(([id, schema]) => [schema, id]),
  );
  const taken = new Set(named.values());
  const schemas = new Map<string, z.ZodType>();
  const answers = new Map<string, ToolAnswer>();
  for (const tool of tools) {
    let id = named.get(tool.output);
    if (id === undefined) {
      const short = `${pascal(tool.name)}Output`;
      const qualified = `${pascal(tool.namespace)}${pascal(tool.name)}Output`;
      id = taken.has(short) ? qualified : short;
      for (let n = 2; taken.has(id); n++) id = `${qualified}${n}`;
      named.set(tool.output, id);
      taken.add(id);
    }
    schemas.set(id, tool.output);
    const answer = answers.get(tool.name) ?? { tool: tool.name, namespaces: [], outputs: [] };
    if (!answer.namespaces.includes(tool.namespace)) answer.namespaces.push(tool.namespace);
    if (!answer.outputs.includes(id)) answer.outputs.push(id);
    answers.set(tool.name, answer);
  }
  return { schemas, answers: [...answers.values()] };
}

/**
 * The answer schemas as OpenAPI components, in output mode: the envelope's payloads and the given
 * tools' outputs. A payload that contains another component (a trace's run, an approval's result
 * envelope) refers to it with `$ref`. A date-time keeps `format: date-time` without zod's long
 * equivalent pattern, which says nothing more.
 */
export function answerComponents(tools: readonly ToolSpec[] = []): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  const all = new Map<string, z.ZodType>([
    ...Object.entries({ ...SHARED_COMPONENTS, ...DATA_COMPONENTS }),
    ...toolOutputComponents(tools).schemas,
  ]);
  for (const [id, schema] of all) {
    if (!registry.has(schema)) registry.add(schema, { id });
  }
  const { schemas } = z.toJSONSchema(registry, {
    io: "output",
    target: "draft-2020-12",
    uri: (id) => `#/components/schemas/${id}`,
    override: ({ jsonSchema }) => {
      if (jsonSchema.format === "date-time") delete jsonSchema.pattern;
    },
  });
  const components: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _dialect, $id: _id, ...rest } = schema as JsonSchema;
    components[id] = rest;
  }
  return components;
}
