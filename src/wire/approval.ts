import * as z from "zod";
import { ApprovalStateSchema, EnvelopeSchema } from "../envelope";
import { SideEffectSchema } from "./side-effect";

/**
 * One human decision about one exact call: bound to the run, the tool, the idempotency key (and so
 * the canonical arguments), the digest of those arguments and the policy version it was asked under.
 */
export const ApprovalRecordSchema = z.strictObject({
  id: z.string(),
  tenant: z.string(),
  run_id: z.string(),
  tool: z.string(),
  side_effect: SideEffectSchema,
  idempotency_key: z.string(),
  args: z.record(z.string(), z.unknown()),
  args_digest: z.string(),
  policy_version: z.string(),
  reasons: z.array(z.string()),
  state: ApprovalStateSchema,
  requested_call_id: z.string(),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
  decided_at: z.iso.datetime().nullable(),
  decided_by: z.string().nullable(),
  decision_reason: z.string().nullable(),
  result: EnvelopeSchema.nullable().describe("The envelope of the execution, once the approved call ran."),
});
export type ApprovalRecord = z.infer<typeof ApprovalRecordSchema>;

/** What the tenant-wide directory keeps of an approval, for listing without waking every run. */
export const ApprovalSummarySchema = ApprovalRecordSchema.pick({
  id: true,
  run_id: true,
  tool: true,
  side_effect: true,
  state: true,
  args: true,
  reasons: true,
  created_at: true,
  expires_at: true,
  decided_by: true,
});
export type ApprovalSummary = z.infer<typeof ApprovalSummarySchema>;
