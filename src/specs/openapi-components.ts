import * as z from "zod";
import { EnvelopeSchema } from "../envelope";
import { ResultPageSchema } from "../tools/builtins";
import { ApprovalRecordSchema, ApprovalSummarySchema } from "../wire/approval";
import { ApprovalDecisionSchema, ApprovalDetailSchema, ApprovalListSchema } from "../wire/approval-answers";
import { HealthSchema } from "../wire/health";
import { RunOpenedSchema } from "../wire/run-open";
import { RunStatusSchema } from "../wire/run-status";
import { RunTraceSchema } from "../wire/run-trace";
import { TraceEntrySchema } from "../wire/trace-entry";
import { NamespaceSpecsSchema } from "./formats";
import type { JsonSchema } from "./json-schema";

/**
 * The payloads a success envelope carries in `data`, by the component name the OpenAPI document
 * gives them. Each is the zod schema its TypeScript type is inferred from (src/wire/), so the
 * document, the type and the test that parses real answers (test/openapi.test.ts) cannot drift.
 */
export const DATA_COMPONENTS = {
  Health: HealthSchema,
  RunOpened: RunOpenedSchema,
  RunStatus: RunStatusSchema,
  RunTrace: RunTraceSchema,
  ResultPage: ResultPageSchema,
  ApprovalList: ApprovalListSchema,
  ApprovalDetail: ApprovalDetailSchema,
  ApprovalDecision: ApprovalDecisionSchema,
  NamespaceSpecs: NamespaceSpecsSchema,
} as const satisfies Record<string, z.ZodType>;
export type DataComponent = keyof typeof DATA_COMPONENTS;

/** Schemas several payloads contain: written once as components and referenced from the others. */
const SHARED_COMPONENTS = {
  Envelope: EnvelopeSchema,
  TraceEntry: TraceEntrySchema,
  ApprovalRecord: ApprovalRecordSchema,
  ApprovalSummary: ApprovalSummarySchema,
} as const satisfies Record<string, z.ZodType>;

/**
 * The answer schemas as OpenAPI components, in output mode. A payload that contains another
 * component (a trace's run, an approval's result envelope) refers to it with `$ref`. A date-time
 * keeps `format: date-time` without zod's long equivalent pattern, which says nothing more.
 */
export function answerComponents(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries({ ...SHARED_COMPONENTS, ...DATA_COMPONENTS })) {
    registry.add(schema, { id });
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
