import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { ApprovalState } from "../envelope";
import type { ApprovalSummary } from "./model";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS approvals (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  state TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  summary TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS approvals_by_state ON approvals (state, created_at);
`;

/**
 * One per tenant: the index operators list approvals from, across every run of the tenant. Each
 * run's ledger stays the source of truth and writes through here whenever an approval changes, so
 * a listing never has to wake every run. The index is keyed by tenant, so an operator of one
 * tenant cannot list or find another tenant's approvals.
 */
export class ApprovalDirectory extends DurableObject<Env> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    void ctx.blockConcurrencyWhile(async () => {
      this.#sql.exec(SCHEMA);
    });
  }

  upsert(summary: ApprovalSummary): void {
    this.#sql.exec(
      `INSERT INTO approvals (id, run_id, state, created_at, expires_at, summary) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET state = excluded.state, summary = excluded.summary`,
      summary.id,
      summary.run_id,
      summary.state,
      summary.created_at,
      summary.expires_at,
      JSON.stringify(summary),
    );
  }

  /** Approvals in a state, newest first. A pending one past its expiry is listed as expired. */
  list(state: ApprovalState, limit = 100): ApprovalSummary[] {
    const now = new Date().toISOString();
    const rows =
      state === "pending"
        ? this.#sql.exec<{ summary: string }>(
            "SELECT summary FROM approvals WHERE state = 'pending' AND expires_at > ? ORDER BY created_at DESC LIMIT ?",
            now,
            limit,
          )
        : state === "expired"
          ? this.#sql.exec<{ summary: string }>(
              "SELECT summary FROM approvals WHERE state = 'expired' OR (state = 'pending' AND expires_at <= ?) ORDER BY created_at DESC LIMIT ?",
              now,
              limit,
            )
          : this.#sql.exec<{ summary: string }>(
              "SELECT summary FROM approvals WHERE state = ? ORDER BY created_at DESC LIMIT ?",
              state,
              limit,
            );
    return rows.toArray().map((row) => {
      const summary = JSON.parse(row.summary) as ApprovalSummary;
      return summary.state === "pending" && summary.expires_at <= now
        ? { ...summary, state: "expired" }
        : summary;
    });
  }

  /** Which run holds an approval, or null when this tenant has no such approval. */
  runOf(id: string): string | null {
    const row = this.#sql
      .exec<{ run_id: string }>("SELECT run_id FROM approvals WHERE id = ?", id)
      .toArray()[0];
    return row?.run_id ?? null;
  }
}
