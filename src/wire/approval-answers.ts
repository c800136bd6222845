import * as z from "zod";
import { ApprovalDuplicateSchema, ApprovalListItemSchema, ApprovalRecordSchema } from "./approval";
import { APPROVAL_STATES } from "./envelope";
import { runStatusSchema } from "./run-status";
import { traceEntrySchema } from "./trace-entry";

export const APPROVAL_LIST_STATES = [...APPROVAL_STATES, "all"] as const;
export const ApprovalListStateSchema = z.enum(APPROVAL_LIST_STATES);

/** What `GET /v1/approvals` answers in `data`: one page of the tenant's approvals, newest first. */
export const ApprovalListSchema = z.strictObject({
  state: ApprovalListStateSchema,
  approvals: z.array(ApprovalListItemSchema),
  next_cursor: z
    .string()
    .nullable()
    .describe("Pass it as cursor for the next page, with the same filters; null on the last page."),
});
export type ApprovalList = z.infer<typeof ApprovalListSchema>;

/** What `GET /v1/approvals/{id}` answers in `data`: the approval with its run and the run's trace. */
export const ApprovalDetailSchema = z.strictObject({
  approval: ApprovalRecordSchema,
  run: runStatusSchema().nullable().describe("Null when the run's data has expired."),
  tool_namespace: z
    .string()
    .nullable()
    .describe(
      "The namespace of the approval's tool: the run's own, or another of the tenant's that the run reached through use_tool. Null when the run's data has expired or the catalog no longer has the tool.",
    ),
  trace: z.array(traceEntrySchema()),
  duplicates: z
    .array(ApprovalDuplicateSchema)
    .describe(
      "Approvals of the same destructive call (same tool and canonical arguments) in other runs of the tenant, pending or gone ahead within the retention window. Approving while this is not empty needs confirm_duplicate: true.",
    ),
});
export type ApprovalDetail = z.infer<typeof ApprovalDetailSchema>;

/** What `POST /v1/approvals/{id}/approve` and `/reject` answer in `data`: the decided approval. */
export const ApprovalDecisionSchema = z.strictObject({
  approval: ApprovalRecordSchema,
});
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;
