import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from "../approvals/list-limits";
import { type AuditFilters, auditQueryOf, encodeAuditCursor } from "../audit/filters";
import type { Env } from "../env";
import type { AuditPage, Receipt } from "../wire/audit";
import { auditLogOf } from "./audit-log";

/**
 * What an operator reads of the tenant's audit log, for the operator API and the console alike: a
 * page of receipts, or every receipt the filters match as NDJSON, each line exactly as the log
 * wrote it (what `npm run audit -- verify` checks).
 */

/** One page of receipts, oldest first; `next_cursor` goes back in as `filters.cursor`. */
export async function auditPage(env: Env, tenant: string, filters: AuditFilters): Promise<AuditPage> {
  const page = await auditLogOf(env, tenant).page(
    tenant,
    auditQueryOf(filters, filters.limit ?? DEFAULT_LIST_LIMIT),
  );
  return {
    receipts: page.receipts.map((line) => JSON.parse(line) as Receipt),
    next_cursor: page.next_after === null ? null : encodeAuditCursor(page.next_after),
  };
}

/** One receipt by its place in the tenant's chain; null when it is not kept. */
export async function auditReceipt(env: Env, tenant: string, seq: number): Promise<Receipt | null> {
  const line = await auditLogOf(env, tenant).receipt(tenant, seq);
  return line === null ? null : (JSON.parse(line) as Receipt);
}

/** Every receipt the filters match from their cursor on, one line each, read a page at a time. */
export function auditExport(env: Env, tenant: string, filters: AuditFilters): ReadableStream<Uint8Array> {
  const log = auditLogOf(env, tenant);
  const encoder = new TextEncoder();
  let after: number | null = filters.cursor ?? 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (after === null) {
        controller.close();
        return;
      }
      const page = await log.page(tenant, { ...auditQueryOf(filters, MAX_LIST_LIMIT), after });
      after = page.next_after;
      if (page.receipts.length > 0) controller.enqueue(encoder.encode(`${page.receipts.join("\n")}\n`));
      if (after === null) controller.close();
    },
  });
}
