import * as z from "zod";
import { ApprovalStateSchema } from "../envelope";
import { ApprovalRecordSchema, ApprovalSummarySchema } from "./approval";
import { RunStatusSchema } from "./run-status";
import { TraceEntrySchema } from "./trace-entry";

/** What `GET /v1/approvals` answers in `data`: the state asked for and the tenant's approvals in it. */
export const ApprovalListSchema = z.strictObject({
  state: ApprovalStateSchema,
  approvals: z.array(ApprovalSummarySchema),
});
export type ApprovalList = z.infer<typeof ApprovalListSchema>;

/** What `GET /v1/approvals/{id}` answers in `data`: the approval with its run and the run's trace. */
export const ApprovalDetailSchema = z.strictObject({
  approval: ApprovalRecordSchema,
  run: RunStatusSchema.nullable().describe("Null when the run's data has expired."),
  trace: z.array(TraceEntrySchema),
});
export type ApprovalDetail = z.infer<typeof ApprovalDetailSchema>;

/** What `POST /v1/approvals/{id}/approve` and `/reject` answer in `data`: the decided approval. */
export const ApprovalDecisionSchema = z.strictObject({
  approval: ApprovalRecordSchema,
});
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;
