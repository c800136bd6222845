/** @jsxImportSource hono/jsx */
import type { Context } from "hono";
import { AuditFiltersSchema } from "../audit/filters";
import { environmentOf } from "../config/environment";
import { auditExport, auditPage, auditReceipt } from "../ledger/audit-client";
import type { ConsoleEnv } from "./console-env";
import { messagePage } from "./guards";
import { filterValues, hrefWith, parseFilters } from "./list-query";
import { tenantToolNames } from "./tenant-tools";
import { AuditPage } from "./views/audit-page";
import { ReceiptPage } from "./views/receipt-page";

const PATH = "/console/audit";
const EXPORT_PATH = "/console/audit/export";

/** `/console/audit`: the tenant's receipts, oldest first, filtered by the form, with their export. */
export async function showAudit(c: Context<ConsoleEnv>) {
  const session = c.get("session");
  const values = filterValues(c.req.url);
  const parsed = parseFilters(AuditFiltersSchema, values);
  const page = parsed.ok ? await auditPage(c.env, session.tenant, parsed.filters) : null;
  const { cursor: _cursor, ...search } = values;
  return c.html(
    <AuditPage
      environment={environmentOf(c.env)}
      session={session}
      values={values}
      tools={tenantToolNames(c.env, session.tenant)}
      problems={parsed.ok ? [] : parsed.problems}
      receipts={page?.receipts ?? []}
      first={values.cursor ? hrefWith(PATH, values, { cursor: undefined }) : null}
      next={page?.next_cursor ? hrefWith(PATH, values, { cursor: page.next_cursor }) : null}
      exportHref={hrefWith(EXPORT_PATH, search)}
    />,
    parsed.ok ? 200 : 422,
  );
}

/** `/console/audit/export`: the receipts the filters match, as NDJSON, as `GET /v1/audit?format=ndjson` answers. */
export async function exportAudit(c: Context<ConsoleEnv>) {
  const session = c.get("session");
  const parsed = parseFilters(AuditFiltersSchema, filterValues(c.req.url));
  if (!parsed.ok) {
    return messagePage(c, 422, "Export not made", "These filters are not valid; go back and fix them.");
  }
  return new Response(auditExport(c.env, session.tenant, parsed.filters), {
    headers: {
      "content-type": "application/x-ndjson; charset=utf-8",
      "content-disposition": `attachment; filename="audit-${session.tenant}.ndjson"`,
      "cache-control": "no-store",
    },
  });
}

/** `/console/audit/:seq`: one receipt, whole. Another tenant's place in its chain is "not found". */
export async function showReceipt(c: Context<ConsoleEnv>) {
  const session = c.get("session");
  const raw = c.req.param("seq") ?? "";
  const seq = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : null;
  const receipt = seq === null ? null : await auditReceipt(c.env, session.tenant, seq);
  if (!receipt) {
    return messagePage(
      c,
      404,
      "Receipt not found",
      "The audit log keeps no such receipt: the link is wrong, or its retention has passed.",
    );
  }
  return c.html(<ReceiptPage environment={environmentOf(c.env)} session={session} receipt={receipt} />);
}
