import * as z from "zod";
import { lazily } from "../core/lazily";
import { type ErrorCode, ErrorCodeSchema, OUTCOMES } from "./envelope";
import { SideEffectSchema } from "./side-effect";

/** One upstream attempt as the trace records it. */
export const attemptRecordSchema = lazily(() =>
  z.strictObject({
    attempt: z.number().int().min(1),
    started_at: z.number().int().describe("When the attempt was sent, in milliseconds since the epoch."),
    latency_ms: z.number().int().nonnegative(),
    upstream_status: z.number().int().nullable(),
    result: z.enum(["success", "timeout", "network_error", "http_error", "invalid_body"]),
    purpose: z
      .enum(["effect", "check"])
      .describe(
        '"effect": the call\'s own request (for a read, the read itself); "check": the postcondition\'s read after a claimed success, not another try of the effect.',
      ),
  }),
);
export type AttemptRecord = z.infer<ReturnType<typeof attemptRecordSchema>>;

/** One dispatch of a run, written ahead ("pending") and completed when the call ends. */
export const traceEntrySchema = lazily(() =>
  z.strictObject({
    seq: z.number().int(),
    call_id: z.string(),
    actor: z.string().describe('"agent", or "operator:<id>" when an operator\'s approval executed the call.'),
    actor_name: z
      .string()
      .nullable()
      .describe("The operator's display name when an operator's approval executed the call; otherwise null."),
    started_at: z.iso.datetime(),
    ended_at: z.iso.datetime().nullable(),
    tool: z.string().nullable(),
    side_effect: SideEffectSchema.nullable(),
    args: z.unknown().describe("Canonical arguments as sent by the agent, sensitive fields masked."),
    outcome: z.enum([...OUTCOMES, "pending"]),
    error_code: ErrorCodeSchema.nullable(),
    upstream_status: z.number().int().nullable(),
    latency_ms: z.number().int().nonnegative().nullable(),
    idempotency_key: z.string().nullable(),
    replayed: z.boolean(),
    result: z
      .unknown()
      .describe("What the model was given, masked and fenced as it saw it; null when not kept."),
    upstream_attempts: z
      .array(attemptRecordSchema())
      .describe(
        "Every upstream request this dispatch made, the call's own attempts (purpose effect) and its postcondition's read (purpose check); empty when nothing left the proxy.",
      ),
    catalog_version: z.string(),
    claim_ms: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe(
        "How long the tenant-wide step took (the claim of a new write's identity and value, before its key was reserved); null when the call made none.",
      ),
    via: z
      .literal("use_tool")
      .optional()
      .describe("Present when the model named the tool through use_tool; `tool` is the real tool it called."),
    edit: z
      .strictObject({
        asked_args: z
          .unknown()
          .describe("The arguments as the agent asked for them, sensitive fields masked."),
        fields: z.array(z.string()).describe("The arguments the operator changed."),
        by: z.string(),
        by_name: z.string().nullable(),
      })
      .optional()
      .describe(
        "Present on an approved call whose arguments an operator changed before approving: `args` are the ones executed.",
      ),
    traceparent: z
      .strictObject({
        trace_id: z.string().regex(/^[0-9a-f]{32}$/),
        parent_id: z.string().regex(/^[0-9a-f]{16}$/),
        flags: z.string().regex(/^[0-9a-f]{2}$/),
      })
      .optional()
      .describe(
        "Present when the caller sent a W3C traceparent (REST header `traceparent`, MCP `params._meta.traceparent`): the call's span is a child of `parent_id` in trace `trace_id`, and its upstream requests carry that trace.",
      ),
    poll: z
      .literal(true)
      .optional()
      .describe(
        "Present when the agent asked again about an approval still pending: answered with the wait, and no call budget spent unless `poll_charged`.",
      ),
    poll_charged: z
      .literal(true)
      .optional()
      .describe(
        "Present on a poll charged as a call: sooner than the wait's `retry_after_ms`, or past an approval's free polls, without `Prefer: wait`.",
      ),
  }),
);
export type TraceEntry = z.infer<ReturnType<typeof traceEntrySchema>>;

/** A row of the run's `trace` table, as SQLite returns it. */
export interface TraceRow {
  seq: number;
  call_id: string;
  actor: string;
  actor_name: string | null;
  started_at: number;
  ended_at: number | null;
  tool: string | null;
  side_effect: string | null;
  args: string;
  outcome: string;
  error_code: string | null;
  upstream_status: number | null;
  latency_ms: number | null;
  idempotency_key: string | null;
  replayed: number;
  attempts: string;
  catalog_version: string;
  result: string | null;
  /** Added by ledger schema V9. */
  claim_ms: number | null;
  /** Added by ledger schema V11: "use_tool" when the call came through it. */
  via?: string | null;
  /** Added by the approval edits migration: JSON of `TraceEntry.edit`. */
  edit?: string | null;
  /** Added by the polls migration: 1 for a poll of a pending approval, 2 for one charged as a call. */
  poll?: number | null;
  /** Added by the trace context migration: JSON of `TraceEntry.traceparent`. */
  traceparent?: string | null;
}

export function traceEntryFromRow(row: TraceRow): TraceEntry {
  return {
    seq: row.seq,
    call_id: row.call_id,
    actor: row.actor,
    actor_name: row.actor_name,
    started_at: new Date(row.started_at).toISOString(),
    ended_at: row.ended_at === null ? null : new Date(row.ended_at).toISOString(),
    tool: row.tool,
    side_effect: row.side_effect as TraceEntry["side_effect"],
    args: JSON.parse(row.args) as unknown,
    outcome: row.outcome as TraceEntry["outcome"],
    error_code: row.error_code as ErrorCode | null,
    upstream_status: row.upstream_status,
    latency_ms: row.latency_ms,
    idempotency_key: row.idempotency_key,
    replayed: row.replayed === 1,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    // Attempts recorded before checks were told apart were all the call's own.
    upstream_attempts: (
      JSON.parse(row.attempts) as Array<Omit<AttemptRecord, "purpose"> & Partial<AttemptRecord>>
    ).map((attempt) => ({ ...attempt, purpose: attempt.purpose ?? "effect" })),
    catalog_version: row.catalog_version,
    claim_ms: row.claim_ms ?? null,
    ...(row.via === "use_tool" ? { via: "use_tool" as const } : {}),
    ...(row.edit ? { edit: JSON.parse(row.edit) as NonNullable<TraceEntry["edit"]> } : {}),
    ...(row.poll === 1 ? { poll: true as const } : {}),
    ...(row.poll === 2 ? { poll: true as const, poll_charged: true as const } : {}),
    ...(row.traceparent
      ? { traceparent: JSON.parse(row.traceparent) as NonNullable<TraceEntry["traceparent"]> }
      : {}),
  };
}
