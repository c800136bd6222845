import * as z from "zod";
import {
  LimitSchema,
  RunIdSchema,
  SinceSchema,
  ToolSchema,
  UntilSchema,
  untilAfterSince,
} from "../approvals/list-filters";

/**
 * The query of `GET /v1/audit` and of the console's audit page: one schema, so both doors accept
 * and refuse the same searches, with located problems (`query.until: must be later than since`).
 * Receipts are listed oldest first, in the order of their chain; a cursor is a place in it.
 */

/** A cursor: the `seq` of a page's last receipt, which the next page starts after. */
export function encodeAuditCursor(seq: number): string {
  return btoa(JSON.stringify(["audit", seq]))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** The `seq` a cursor points after; null for anything `encodeAuditCursor` did not write. */
export function decodeAuditCursor(cursor: string): number | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(atob(cursor.replaceAll("-", "+").replaceAll("_", "/")));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || parsed[0] !== "audit") return null;
  const seq = parsed[1];
  return Number.isSafeInteger(seq) && (seq as number) >= 0 ? (seq as number) : null;
}

const AuditCursorSchema = z
  .string()
  .transform((text, ctx) => {
    const seq = decodeAuditCursor(text);
    if (seq === null) {
      ctx.issues.push({ code: "custom", message: "not a cursor this list gave", input: text });
      return z.NEVER;
    }
    return seq;
  })
  .optional()
  .describe("The next_cursor of the previous page; omit it for the oldest receipt kept.");

const OperatorSchema = z
  .string()
  .regex(/^operator:[0-9a-f]{12}$/, 'not an operator id ("operator:" and 12 hex digits)')
  .optional()
  .describe("Only receipts this operator took part in: decided, approved, edited, or executed by approving.");

export const AUDIT_FORMATS = ["json", "ndjson"] as const;

export const AuditFiltersSchema = z
  .strictObject({
    since: SinceSchema.describe(
      "Only decisions made at or after this instant (ISO 8601; a date alone means its start).",
    ),
    until: UntilSchema.describe(
      "Only decisions made before this instant (ISO 8601; a date alone includes that whole day).",
    ),
    tool: ToolSchema.describe("Only receipts about this tool, such as issue_refund."),
    run_id: RunIdSchema.describe("Only the receipts of this run."),
    operator: OperatorSchema,
    cursor: AuditCursorSchema,
    limit: LimitSchema,
    format: z
      .enum(AUDIT_FORMATS)
      .default("json")
      .describe(
        "json (the default): one page in an envelope. ndjson: every matching receipt from the cursor on, one per line, as the log wrote it: the export `npm run audit -- verify` checks.",
      ),
  })
  .superRefine(untilAfterSince);
export type AuditFilters = z.output<typeof AuditFiltersSchema>;

/** What the audit log is asked for: a page of the filters, in milliseconds. */
export interface AuditQuery {
  since: number | null;
  until: number | null;
  tool: string | null;
  run_id: string | null;
  operator: string | null;
  /** The `seq` to start after. */
  after: number;
  limit: number;
}

export function auditQueryOf(filters: AuditFilters, limit: number): AuditQuery {
  return {
    since: filters.since === undefined ? null : Date.parse(filters.since),
    until: filters.until === undefined ? null : Date.parse(filters.until),
    tool: filters.tool ?? null,
    run_id: filters.run_id ?? null,
    operator: filters.operator ?? null,
    after: filters.cursor ?? 0,
    limit,
  };
}
