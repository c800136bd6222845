import { Hono } from "hono";
import { AuditFiltersSchema } from "../audit/filters";
import type { AppEnv } from "../http/app-env";
import { requireOperatorKey } from "../http/authenticate";
import { requestContext, respond } from "../http/respond";
import { validated } from "../http/validation-hook";
import { auditExport, auditPage } from "../ledger/audit-client";
import { defineOperation, envelope, FAILURES, routeOf } from "../specs/operation";
import { success } from "../wire/envelope";

/** The tenant's audit log for its operators (docs/audit.md), mounted at `GET /v1/audit`. */
export const audit = new Hono<AppEnv>();

export const AUDIT = defineOperation({
  method: "get",
  path: "/v1/audit",
  tag: "audit",
  summary: "Read and export the audit log (operators)",
  description:
    "The tenant's receipts, oldest first: one per effect decision (a write's outcome, its reconciliation, each approval decision), hash-chained and signed with a key of /.well-known/audit-jwks.json. Filter by decision time, tool, run and operator; pass `next_cursor` back as `cursor` for the next page. `format=ndjson` answers every matching receipt from the cursor on, one per line as the log wrote it (`application/x-ndjson`, not an envelope): the export `npm run audit -- verify` checks offline. An operator reads their own tenant's log only.",
  credentials: ["operatorKey"],
  query: () => AuditFiltersSchema,
  responses: {
    "200": envelope("One page of receipts (or, with format=ndjson, the receipts as NDJSON).", "AuditPage"),
    "401": FAILURES["401"],
    "403": FAILURES["403"],
    "422": envelope(
      "An unknown parameter, a bad date, cursor, tool, run or operator id, or a limit out of range (`validation_error`), each problem naming its parameter.",
    ),
  },
});

audit.on(
  AUDIT.method,
  routeOf(AUDIT, "/v1/audit"),
  requireOperatorKey,
  validated("query", AUDIT.query),
  async (c) => {
    const filters = c.req.valid("query");
    const tenant = c.get("tenant");
    if (filters.format === "ndjson") {
      return new Response(auditExport(c.env, tenant, filters), {
        headers: {
          "content-type": "application/x-ndjson; charset=utf-8",
          "content-disposition": `attachment; filename="audit-${tenant}.ndjson"`,
          "cache-control": "no-store",
        },
      });
    }
    return respond(c, success(requestContext(c.env), await auditPage(c.env, tenant, filters)));
  },
);
