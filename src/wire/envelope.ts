import * as z from "zod";
import { lazily } from "../core/lazily";

/**
 * The one response shape of the proxy. Every body it sends, a tool result, an auth failure or a
 * malformed request, is an envelope; agents branch on `outcome` and `error.code`, never on prose.
 */

export const OUTCOMES = ["success", "retryable_failure", "terminal_failure"] as const;
export const OutcomeSchema = z.enum(OUTCOMES);
export type Outcome = z.infer<typeof OutcomeSchema>;

export const ERROR_CODES = [
  "validation_error",
  "permission_error",
  "not_found",
  "transient_error",
  "timeout",
  "rate_limited",
  "conflict_error",
  "partial_success",
  "silent_failure",
  "terminal_error",
  "budget_exhausted",
  "repeat_detected",
  "approval_required",
  "approval_rejected",
  "approval_expired",
  "run_closed",
  /** A remote tool whose definition no longer matches the one reviewed: not called. */
  "upstream_changed",
  /** An upstream answer past the proxy's bounds (bytes, items, nesting, one string): cut off, not kept. */
  "upstream_too_large",
  /**
   * The tool's contract changed since this run was shown it or last called it: not called. The
   * run now knows the new contract; list the tools again, then call it as it is now.
   */
  "tool_changed",
  /** The tool's sunset has passed: it is refused for good, and `details.use_instead` names its successor. */
  "tool_retired",
  /**
   * The proxy's own deployment lacks what the call needs (a declared secret): nothing was sent, and
   * a retry fails alike until an operator sets it.
   */
  "configuration_error",
  "internal_error",
] as const;
export const ErrorCodeSchema = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

export const NEXT_ACTIONS = [
  "fix_arguments",
  "retry",
  "wait_for_approval",
  "reconcile",
  "escalate_to_human",
  "stop",
  "use_other_tool",
  /** The run's tools changed: list them again (`GET /v1/runs/{run_id}/tools`, MCP `tools/list`). */
  "list_tools",
] as const;
export const NextActionSchema = z.enum(NEXT_ACTIONS);
export type NextAction = z.infer<typeof NextActionSchema>;

export const EnvironmentSchema = z.enum(["sandbox", "production"]);
export type EnvironmentName = z.infer<typeof EnvironmentSchema>;

/**
 * The object schemas below describe the envelope for the API reference, the JSON Schemas of tool
 * outputs and the tests; no request parses them, so each is built on its first use (`lazily`), not
 * when an isolate starts.
 */

export const problemSchema = lazily(() =>
  z.object({
    field: z.string(),
    reason: z.string(),
    hint: z.string(),
  }),
);
export type Problem = z.infer<ReturnType<typeof problemSchema>>;

export const toolErrorSchema = lazily(() =>
  z.object({
    code: ErrorCodeSchema,
    message: z.string(),
    problems: z.array(problemSchema()),
    retryable: z.boolean(),
    retry_after_ms: z.number().int().nonnegative().nullable(),
    side_effect_confirmed: z.boolean().nullable(),
    external_id: z.string().nullable(),
    recommended_next_action: NextActionSchema,
    /** Machine-readable specifics: the limit that tripped, the tools that exist, ... */
    details: z.record(z.string(), z.unknown()).nullable(),
  }),
);

export const budgetSchema = lazily(() =>
  z.object({
    calls_left: z.number().int().nonnegative(),
    writes_left: z.number().int().nonnegative(),
    destructive_left: z.number().int().nonnegative(),
    deadline_ms_left: z.number().int().nonnegative(),
  }),
);
export type Budget = z.infer<ReturnType<typeof budgetSchema>>;

export const APPROVAL_STATES = ["pending", "approved", "executed", "rejected", "expired"] as const;
export const ApprovalStateSchema = z.enum(APPROVAL_STATES);
export type ApprovalState = z.infer<typeof ApprovalStateSchema>;

/**
 * What an approval's call did, told apart from its state: `executed` (it acted, `result` says
 * how), `refused` (the upstream refused it, known not to have acted), `not_sent` (it never left:
 * rejected, expired, or refused by the proxy before sending, as a remote tool that drifted from
 * its pin), `in_doubt` (it was sent and whether it acted is unknown).
 */
export const APPROVAL_EXECUTIONS = ["executed", "refused", "not_sent", "in_doubt"] as const;
export const ApprovalExecutionSchema = z.enum(APPROVAL_EXECUTIONS);
export type ApprovalExecution = z.infer<typeof ApprovalExecutionSchema>;

/**
 * The part of an approval an agent may see: which one, where it stands, until when it can be granted,
 * what its call did once that is known, and, when an operator changed the arguments, what was asked and what was approved.
 */
export const approvalBlockSchema = lazily(() =>
  z.object({
    id: z.string(),
    state: ApprovalStateSchema,
    expires_at: z.string(),
    execution: ApprovalExecutionSchema.optional().describe(
      "What the approved call did, once known (refused and not_sent: nothing was done).",
    ),
    edit: z
      .strictObject({
        asked_args: z.record(z.string(), z.unknown()).describe("The arguments the agent asked for."),
        approved_args: z
          .record(z.string(), z.unknown())
          .describe("The arguments the operator approved instead: what executes."),
        fields: z.array(z.string()).describe("The arguments the operator changed."),
        by_name: z.string().nullable().describe("Who changed them, by display name, when configured."),
      })
      .optional()
      .describe("Present when an operator changed the arguments before approving."),
  }),
);
export type ApprovalBlock = z.infer<ReturnType<typeof approvalBlockSchema>>;

/**
 * A deprecated tool's notice (src/catalog/deprecation.ts): since when (ISO 8601), from when its calls
 * are refused (`sunset`), the tool to call instead and why. Left undescribed in the schema: it rides
 * in every tool's MCP output schema, and its names say what they are.
 */
export const deprecationSchema = lazily(() =>
  z.object({ since: z.string(), sunset: z.string(), use_instead: z.string(), why: z.string() }),
);

export const envelopeSchema = lazily(() =>
  z
    .object({
      outcome: OutcomeSchema,
      tool: z.string().nullable(),
      call_id: z.string(),
      environment: EnvironmentSchema,
      idempotency_key: z.string().nullable(),
      replayed: z.boolean(),
      data: z.unknown().nullable(),
      observed_state: z.unknown().nullable(),
      error: toolErrorSchema().nullable(),
      budget: budgetSchema().nullable(),
      /** Set when the call waits for, or was decided by, a human approval. */
      approval: approvalBlockSchema().nullable(),
      /**
       * Present when the called tool is deprecated: until its sunset, then refused (`tool_retired`).
       * REST answers carry it in the `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) headers too.
       */
      deprecation: deprecationSchema().optional(),
    })
    .strict()
    .refine((envelope) => (envelope.outcome === "success") === (envelope.error === null), {
      message: "an envelope has an error exactly when its outcome is not success",
    }),
);
export type Envelope = z.infer<ReturnType<typeof envelopeSchema>>;

/** What a caller passes to describe a failure; everything else gets a safe default. */
export interface FailureSpec {
  code: ErrorCode;
  message: string;
  problems?: Problem[];
  retry_after_ms?: number | null;
  side_effect_confirmed?: boolean | null;
  external_id?: string | null;
  recommended_next_action?: NextAction;
  details?: Record<string, unknown> | null;
  /** Overrides the outcome implied by the code (e.g. a timeout of a read that may be retried). */
  outcome?: Exclude<Outcome, "success">;
}

export interface EnvelopeContext {
  call_id: string;
  environment: EnvironmentName;
  tool?: string | null;
  idempotency_key?: string | null;
  replayed?: boolean;
  budget?: Budget | null;
  observed_state?: unknown;
  approval?: ApprovalBlock | null;
}

interface CodeDefaults {
  outcome: Exclude<Outcome, "success">;
  next: NextAction;
}

/**
 * Whether a failure with this code can have left a side effect behind. Refusals happen before
 * anything is dispatched, so their answer is a certain `false`; the others are unknown (`null`)
 * unless the classifier knows better.
 */
export function effectKnownAbsent(code: ErrorCode): boolean {
  switch (code) {
    case "validation_error":
    case "permission_error":
    case "upstream_changed":
    case "not_found":
    case "budget_exhausted":
    case "repeat_detected":
    case "approval_required":
    case "approval_rejected":
    case "approval_expired":
    case "run_closed":
    case "rate_limited":
    case "configuration_error":
    case "tool_changed":
    case "tool_retired":
      return true;
    case "transient_error":
    case "timeout":
    case "conflict_error":
    case "partial_success":
    case "silent_failure":
    case "terminal_error":
    case "upstream_too_large":
    case "internal_error":
      return false;
    default:
      return assertNever(code);
  }
}

/** The outcome and next step each code implies unless the caller says otherwise. */
export function defaultsFor(code: ErrorCode): CodeDefaults {
  switch (code) {
    case "validation_error":
      return { outcome: "terminal_failure", next: "fix_arguments" };
    case "permission_error":
      return { outcome: "terminal_failure", next: "stop" };
    case "not_found":
      return { outcome: "terminal_failure", next: "fix_arguments" };
    case "transient_error":
    case "timeout":
    case "rate_limited":
      return { outcome: "retryable_failure", next: "retry" };
    case "conflict_error":
      return { outcome: "terminal_failure", next: "reconcile" };
    case "partial_success":
    case "silent_failure":
      return { outcome: "terminal_failure", next: "reconcile" };
    case "terminal_error":
    case "upstream_changed":
    case "upstream_too_large":
    case "configuration_error":
      return { outcome: "terminal_failure", next: "escalate_to_human" };
    case "budget_exhausted":
      return { outcome: "terminal_failure", next: "stop" };
    case "repeat_detected":
      return { outcome: "terminal_failure", next: "escalate_to_human" };
    case "approval_required":
      return { outcome: "retryable_failure", next: "wait_for_approval" };
    case "approval_rejected":
    case "approval_expired":
      return { outcome: "terminal_failure", next: "escalate_to_human" };
    case "run_closed":
      return { outcome: "terminal_failure", next: "stop" };
    case "tool_changed":
      return { outcome: "terminal_failure", next: "list_tools" };
    case "tool_retired":
      return { outcome: "terminal_failure", next: "use_other_tool" };
    case "internal_error":
      return { outcome: "retryable_failure", next: "retry" };
    default:
      return assertNever(code);
  }
}

export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${String(value)}`);
}

export function success(ctx: EnvelopeContext, data: unknown): Envelope {
  return {
    outcome: "success",
    tool: ctx.tool ?? null,
    call_id: ctx.call_id,
    environment: ctx.environment,
    idempotency_key: ctx.idempotency_key ?? null,
    replayed: ctx.replayed ?? false,
    data: data ?? null,
    observed_state: ctx.observed_state ?? null,
    error: null,
    budget: ctx.budget ?? null,
    approval: ctx.approval ?? null,
  };
}

export function failure(ctx: EnvelopeContext, spec: FailureSpec): Envelope {
  const defaults = defaultsFor(spec.code);
  const outcome = spec.outcome ?? defaults.outcome;
  return {
    outcome,
    tool: ctx.tool ?? null,
    call_id: ctx.call_id,
    environment: ctx.environment,
    idempotency_key: ctx.idempotency_key ?? null,
    replayed: ctx.replayed ?? false,
    data: null,
    observed_state: ctx.observed_state ?? null,
    error: {
      code: spec.code,
      message: spec.message,
      problems: spec.problems ?? [],
      retryable: outcome === "retryable_failure",
      retry_after_ms: spec.retry_after_ms ?? null,
      side_effect_confirmed:
        spec.side_effect_confirmed !== undefined
          ? spec.side_effect_confirmed
          : effectKnownAbsent(spec.code)
            ? false
            : null,
      external_id: spec.external_id ?? null,
      recommended_next_action: spec.recommended_next_action ?? defaults.next,
      details: spec.details ?? null,
    },
    budget: ctx.budget ?? null,
    approval: ctx.approval ?? null,
  };
}

/**
 * The HTTP status that mirrors an envelope, so plain HTTP clients can branch without parsing.
 * `authFailure` distinguishes "who are you?" (401) from "you may not" (403).
 */
export function httpStatusFor(envelope: Envelope, opts: { authFailure?: boolean } = {}): number {
  const error = envelope.error;
  if (!error) return 200;
  switch (error.code) {
    case "validation_error":
      return 422;
    case "permission_error":
      return opts.authFailure ? 401 : 403;
    case "not_found":
      return 404;
    case "conflict_error":
    case "repeat_detected":
    case "run_closed":
    case "approval_required":
    case "tool_changed":
      return 409;
    // Gone: the tool was retired at its sunset (RFC 8594).
    case "tool_retired":
      return 410;
    case "approval_rejected":
    case "approval_expired":
      return 403;
    case "budget_exhausted":
      return 403;
    case "rate_limited":
      return 429;
    case "transient_error":
      return 503;
    case "timeout":
      return 504;
    case "partial_success":
    case "silent_failure":
    case "terminal_error":
    case "upstream_changed":
    case "upstream_too_large":
      return 502;
    // The proxy's own fault, as a 500 says; the outcome says no retry helps.
    case "configuration_error":
    case "internal_error":
      return 500;
    default:
      return assertNever(error.code);
  }
}
