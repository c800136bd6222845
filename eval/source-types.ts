import type { RequestLogEntry } from "../sandbox/src/model";
/** Rows of the sandbox's admin API (sandbox/API.md, "Admin"), as far as the evaluation reads them. */

export interface AdminRefund {
  refund_id: string;
  order_id: string;
  amount_cents: number;
  reason: string;
  tenant: string;
  run_id: string | null;
  created_at: string;
}

export interface AdminTicket {
  ticket_id: string;
  customer_id: string;
  priority: string;
  summary: string;
  tenant: string;
  run_id: string | null;
}

export interface AdminEmail {
  email_id: string;
  customer_id: string;
  subject: string;
  tenant: string;
  run_id: string | null;
}

/** A stored email draft (GET /_admin/email-drafts): what a send of it would say. */
export interface AdminDraft {
  draft_id: string;
  customer_id: string;
  subject: string;
  body: string;
  version: number;
}

/** An entry of the sandbox's request log, as its admin API returns it. */
export type AdminRequest = RequestLogEntry;

/** What one run left at the source. */
export interface SourceEffects {
  refunds: AdminRefund[];
  tickets: AdminTicket[];
  emails: AdminEmail[];
  /** The tenant's email drafts: a send's approval names only a draft, its effect is the draft's. */
  drafts: AdminDraft[];
  requests: AdminRequest[];
}

/** An approval as the operator API lists it (GET /v1/approvals?state=). */
export interface ApprovalView {
  id: string;
  run_id: string;
  tool: string;
  state: string;
  args: Record<string, unknown>;
  decided_by: string | null;
}
