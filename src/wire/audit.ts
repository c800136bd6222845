import * as z from "zod";
import { ApproverSchema } from "./approval";
import { CapLimitSchema } from "./effects";
import { approvalUserSchema } from "./run-user";
import { SideEffectSchema } from "./side-effect";

/**
 * A receipt of the tenant's audit log: one effect decision, hash-chained to the receipt before it and
 * signed (docs/audit.md). The schema is the one definition of its shape: the log writes it, `GET
 * /v1/audit` serves it, and `npm run audit -- verify` parses an export with it.
 */

/** What a receipt records: a write's outcome, its reconciliation after a restart, or an approval's decision. */
export const AUDIT_TYPES = [
  /** A write or destructive call's outcome: made, refused, in doubt, or unknown; also when a later send or read settles it. */
  "effect.outcome",
  /** A send a restart cut off, found by the run's alarm and recorded in doubt. */
  "effect.reconciled",
  /** One operator's approval of a call that needs two, recorded before it executes. */
  "approval.approver",
  /** An approval granted: the call executes now. */
  "approval.approved",
  /** An operator changed the call's arguments before approving it. */
  "approval.edited",
  "approval.rejected",
  /** The proxy expired it: its window, the run's end or deadline, a spent budget, a changed policy. */
  "approval.expired",
  /** The agent cancelled it (an MCP client cancelled the task waiting for it). */
  "approval.withdrawn",
] as const;
export const AuditTypeSchema = z.enum(AUDIT_TYPES);

/**
 * What became of a write, as the proxy knows it when the receipt is written: `made` (confirmed),
 * `not_made` (the upstream refused it, or a read proved it absent: `status` and `read_back` say
 * which), `in_doubt` (sent, its fate unknown; a resend or a read may settle it in a later receipt),
 * `unknown` (settled as unknown: a human must reconcile it).
 */
export const EFFECT_OUTCOMES = ["made", "not_made", "in_doubt", "unknown"] as const;

const Digest = z.string().regex(/^[0-9a-f]{64}$/);

const AuditActorSchema = z.strictObject({
  kind: z
    .enum(["agent", "operator", "proxy"])
    .describe(
      "Who made the decision: the run's agent, an operator, or the proxy itself (an expiry, a reconciliation).",
    ),
  id: z
    .string()
    .nullable()
    .describe('An operator\'s id ("operator:<key fingerprint>"); null for the agent and the proxy.'),
  name: z.string().nullable().describe("The operator's display name, when configured."),
});

const AuditContractSchema = z.strictObject({
  kind: z.enum(["tool_version", "catalog_version"]),
  digest: z.string(),
});
export type AuditContract = z.infer<typeof AuditContractSchema>;

const AuditToolSchema = z.strictObject({
  name: z.string(),
  namespace: z.string(),
  side_effect: SideEffectSchema,
  contract: AuditContractSchema.describe(
    "What the tool's contract was when the run used it: the tool's own version as the run pinned it (a digest of its schemas, description, upstream, policies and trust), or, for a run that pinned none, the run's catalog version (a hash of every tool's).",
  ),
});

const AuditCallSchema = z.strictObject({
  call_id: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  args: z
    .unknown()
    .describe(
      "The canonical arguments executed (or asked), sensitive fields masked as the trace masks them.",
    ),
  args_digest: Digest.nullable().describe(
    "SHA-256 of the tool and its canonical arguments before masking: whoever holds the arguments can check them.",
  ),
});

const AuditApprovalSchema = z.strictObject({
  id: z.string(),
  state: z.string(),
  requested_at: z.iso.datetime(),
  roles: z.array(z.string()).describe("The roles whose decision counts; empty: any operator of the tenant."),
  approvals_required: z.number().int().min(1),
  approvers: z.array(ApproverSchema).describe("Who approved, in order, when more than one must."),
  decided_by: z.string().nullable(),
  decided_by_name: z.string().nullable(),
  decided_at: z.iso.datetime().nullable(),
  reason: z.string().nullable(),
  seen: z
    .strictObject({
      args_digest: z.string().describe("The digest of the arguments the decision was made on."),
      context_digest: Digest.nullable().describe(
        "SHA-256 of the decision context (the facts a declared read showed the operator), when the deciding form sent it.",
      ),
    })
    .describe("What the deciding operator saw."),
  edit: z
    .strictObject({
      by: z.string(),
      by_name: z.string().nullable(),
      at: z.iso.datetime(),
      fields: z.array(z.string()),
      asked_args: z.unknown().describe("The arguments as the agent asked for them, masked."),
      asked_key: z.string(),
    })
    .nullable(),
  overrides: z
    .strictObject({
      cap: CapLimitSchema.nullable().describe("A value cap the call exceeds, which the approval overrides."),
      earlier_effects: z
        .number()
        .int()
        .nonnegative()
        .describe("Other runs' effects on the same business thing the approval showed."),
      duplicate_confirmed: z
        .boolean()
        .describe(
          "The deciding operator confirmed approving a repeat of another run's call or effect (confirm_duplicate).",
        ),
    })
    .describe("What the decision lets through that the proxy would have stopped."),
});

export const AuditUpstreamSchema = z.strictObject({
  outcome: z.enum(EFFECT_OUTCOMES),
  status: z
    .number()
    .int()
    .nullable()
    .describe("The upstream's last HTTP status for the call; null when none came."),
  error_code: z.string().nullable(),
  external_id: z.string().nullable().describe("The upstream's id of what it did, when known."),
  answer_digest: Digest.describe(
    "SHA-256 of the answer as the proxy kept it: outcome, data and error, in canonical JSON.",
  ),
  settled_after_doubt: z
    .boolean()
    .describe("The call was in doubt before this outcome: a resend or a read settled it."),
});

const ReadBackSchema = z.strictObject({
  kind: z
    .enum(["postcondition", "settle"])
    .describe("A postcondition's read after a claimed success, or the read that settles a write in doubt."),
  verdict: z.string().describe("held, silent_failure or partial_success; found, absent, unclear or unread."),
});

/** One decision, as its receipt records it (the audit log adds its place in the chain and signs it). */
export const AuditEventSchema = z.strictObject({
  id: z
    .string()
    .regex(/^rcp_[0-9a-f]{24}$/)
    .describe("The receipt's id, stable across every delivery of it."),
  type: AuditTypeSchema,
  at: z.iso.datetime().describe("When the decision was committed."),
  run_id: z.string(),
  agent_profile: z
    .string()
    .nullable()
    .describe("The agent profile the run was opened with; null for a tenant key's run."),
  end_user: approvalUserSchema()
    .nullable()
    .describe(
      "The end user the run acted for, as the tenant's identity provider asserted them when it opened (subject, issuer, name; never their other claims); null for a run that named no user.",
    ),
  actor: AuditActorSchema,
  tool: AuditToolSchema.nullable(),
  call: AuditCallSchema.nullable(),
  approval: AuditApprovalSchema.nullable(),
  upstream: AuditUpstreamSchema.nullable(),
  read_back: ReadBackSchema.nullable(),
});
export type AuditEvent = z.infer<typeof AuditEventSchema>;
type AuditUpstream = z.infer<typeof AuditUpstreamSchema>;

/**
 * What a run's ledger writes to its outbox for one decision: the event, with the upstream's answer
 * itself where the receipt will hold its digest (a digest is computed asynchronously, and the
 * ledger commits synchronously; the audit log computes it and keeps only the digest).
 */
export type AuditDraft = Omit<AuditEvent, "upstream"> & {
  upstream: (Omit<AuditUpstream, "answer_digest"> & { answer: unknown }) | null;
};

/** A receipt as the log keeps and exports it: the event, chained and signed. */
export const ReceiptSchema = AuditEventSchema.extend({
  v: z.literal(1),
  tenant: z.string(),
  seq: z.number().int().min(1).describe("The receipt's place in the tenant's chain, from 1, without gaps."),
  prev: Digest.describe("The hash of the receipt before it; 64 zeros for the first."),
  recorded_at: z.iso.datetime().describe("When the audit log appended it."),
  hash: Digest.describe("SHA-256 of the receipt's canonical JSON without hash and sig."),
  sig: z.string().describe("A compact JWS (EdDSA, its kid in the header) whose payload is the hash."),
});
export type Receipt = z.infer<typeof ReceiptSchema>;

/** What `GET /v1/audit` answers in `data`: one page of receipts, oldest first. */
export const AuditPageSchema = z.strictObject({
  receipts: z.array(ReceiptSchema),
  next_cursor: z
    .string()
    .nullable()
    .describe("Pass it as cursor for the next page, with the same filters; null on the last page."),
});
export type AuditPage = z.infer<typeof AuditPageSchema>;
