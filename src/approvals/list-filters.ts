import * as z from "zod";
import { APPROVAL_LIST_STATES } from "../wire/approval-answers";
import { RUN_LIST_STATES } from "../wire/run-summary";
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from "./list-limits";
import { decodeCursor } from "./page-cursor";
import { parseSubjectQuery } from "./subjects";

/**
 * The filters of the operator's lists, as query parameters: the JSON API validates them with these
 * schemas (`GET /v1/approvals`, `GET /v1/runs`) and the console parses its filter forms with the same
 * ones, so both doors accept and refuse exactly the same searches.
 */

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?$/;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * An instant as ISO 8601 (`2026-05-01T12:00:00Z`, an offset, or none for UTC), or a date alone,
 * which means the whole day: its start for `since`, its end for `until`.
 */
function instant(edge: "start" | "end", description: string) {
  return z
    .string()
    .transform((text, ctx) => {
      const dateOnly = DATE_ONLY.test(text);
      const withZone = dateOnly || /(Z|[+-]\d{2}:\d{2})$/.test(text) ? text : `${text}Z`;
      const ms = dateOnly || DATE_TIME.test(text) ? Date.parse(withZone) : Number.NaN;
      if (Number.isNaN(ms)) {
        ctx.issues.push({
          code: "custom",
          message: "not an ISO 8601 date or date-time (2026-05-01 or 2026-05-01T12:00:00Z)",
          input: text,
        });
        return z.NEVER;
      }
      return new Date(dateOnly && edge === "end" ? ms + DAY_MS : ms).toISOString();
    })
    .optional()
    .describe(description);
}

export const SinceSchema = instant(
  "start",
  "Only what was created at or after this instant (ISO 8601; a date alone means its start).",
);
export const UntilSchema = instant(
  "end",
  "Only what was created before this instant (ISO 8601; a date alone includes that whole day).",
);

const CursorSchema = z
  .string()
  .transform((text, ctx) => {
    const cursor = decodeCursor(text);
    if (cursor === null) {
      ctx.issues.push({ code: "custom", message: "not a cursor this list gave", input: text });
      return z.NEVER;
    }
    return cursor;
  })
  .optional()
  .describe("The next_cursor of the previous page; omit it for the newest page.");

export const LimitSchema = z
  .string()
  .regex(/^\d{1,6}$/, "not a whole number")
  .transform(Number)
  .pipe(z.number().int().min(1).max(MAX_LIST_LIMIT))
  .optional()
  .describe(`How many to list, 1 to ${MAX_LIST_LIMIT}; ${DEFAULT_LIST_LIMIT} when omitted.`);

export const ToolSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, "not a tool name")
  .optional()
  .describe("Only calls of this tool, such as issue_refund.");

const SubjectSchema = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .transform((text, ctx) => {
    const query = parseSubjectQuery(text);
    if (query.value === "") {
      ctx.issues.push({ code: "custom", message: "names a key but no value", input: text });
      return z.NEVER;
    }
    return query;
  })
  .optional()
  .describe(
    "An id from the arguments, such as A1002 (any argument ending in _id with that value) or order_id=A1002 (that argument only).",
  );

export const RunIdSchema = z
  .string()
  .regex(/^run_[A-Za-z0-9]{1,64}$/, "not a run id")
  .optional()
  .describe("Only the approvals of this run.");

/** An `until` before `since` is a mistake worth saying, not an empty list. */
export function untilAfterSince(
  filters: { since?: string | undefined; until?: string | undefined },
  ctx: z.RefinementCtx,
) {
  if (filters.since !== undefined && filters.until !== undefined && filters.until <= filters.since) {
    ctx.addIssue({
      code: "custom",
      path: ["until"],
      message: "must be later than since",
      input: filters.until,
    });
  }
}

export const ApprovalFiltersSchema = z
  .strictObject({
    state: z
      .enum(APPROVAL_LIST_STATES)
      .default("pending")
      .describe(
        `The state of the approvals to list: ${APPROVAL_LIST_STATES.join(", ")}; pending when omitted. A pending approval past its expiry is listed as expired.`,
      ),
    tool: ToolSchema,
    subject: SubjectSchema,
    run_id: RunIdSchema,
    since: SinceSchema,
    until: UntilSchema,
    cursor: CursorSchema,
    limit: LimitSchema,
  })
  .superRefine(untilAfterSince);
export type ApprovalFilters = z.output<typeof ApprovalFiltersSchema>;

export const RunFiltersSchema = z
  .strictObject({
    state: z
      .enum(RUN_LIST_STATES)
      .default("all")
      .describe(
        "The state of the runs to list: open, closed (ended), expired (open past its deadline), or all (the default).",
      ),
    tool: ToolSchema.describe("Only runs that called this tool."),
    subject: SubjectSchema,
    since: SinceSchema,
    until: UntilSchema,
    cursor: CursorSchema,
    limit: LimitSchema,
  })
  .superRefine(untilAfterSince);
export type RunFilters = z.output<typeof RunFiltersSchema>;
