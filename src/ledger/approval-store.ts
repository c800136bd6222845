import type { Approver } from "../approvals/approvers";
import { executionOfState } from "../approvals/execution";
import {
  type ApprovalRecord,
  type ApprovalSummary,
  approvalUserOf,
  type EditedApproval,
  isOverdue,
} from "../approvals/model";
import { notifyApproval } from "../approvals/notify";
import type { SideEffect } from "../catalog/define-tool";
import { canonicalJson } from "../core/canonical-json";
import type { Env } from "../env";
import type { RunMeta } from "../machine/run-state";
import type { ApprovalDecisionRecord } from "../machine/writes";
import type { ApprovalEdit, PolicyBinding } from "../wire/approval";
import type { ApprovalExecution, ApprovalState, Envelope } from "../wire/envelope";

interface ApprovalRow extends Record<string, SqlStorageValue> {
  id: string;
  idempotency_key: string;
  tool: string;
  side_effect: string;
  args: string;
  args_digest: string;
  policy_version: string;
  reasons: string;
  state: string;
  requested_call_id: string;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
  decided_by: string | null;
  /** Added by a later migration (ledger schema V6). */
  decided_by_name: string | null;
  decision_reason: string | null;
  result: string | null;
  /** Added by a later migration (ledger schema V9): `{ earlier_effects, limit }`. */
  cross_run: string | null;
  /** Added by the escalation migration: when a decision is due, and when it was announced overdue. */
  sla_due_at: number | null;
  escalated_at: number | null;
  /**
   * Added by a later migration (ledger schema "approver roles"): `{ roles, required, approvers }`;
   * null for an approval any one operator decides that no one has approved yet.
   */
  approvers: string | null;
  /** Added by the approval edits migration: the key as asked, and the edit, once an operator edited it. */
  asked_key: string | null;
  edit: string | null;
  /** Added by the approval execution migration: what the call did, once its outcome is known. */
  execution: string | null;
  /** Added by the tool versions migration: what `policy_version` is made of (JSON). */
  policy_binding: string | null;
}

/** The run that holds the approvals, as they read it: its tenant, its id, and whom it acts for. */
export type ApprovalOwner = Pick<RunMeta, "tenant" | "run_id" | "user">;

/** What the `approvers` column keeps. */
interface StoredApprovers {
  roles: string[];
  required: number;
  approvers: Approver[];
}

export const APPROVALS_SCHEMA = `
CREATE TABLE IF NOT EXISTS approvals (
  id TEXT PRIMARY KEY,
  idempotency_key TEXT NOT NULL UNIQUE,
  tool TEXT NOT NULL,
  side_effect TEXT NOT NULL,
  args TEXT NOT NULL,
  args_digest TEXT NOT NULL,
  policy_version TEXT NOT NULL,
  reasons TEXT NOT NULL,
  state TEXT NOT NULL,
  requested_call_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  decided_at INTEGER,
  decided_by TEXT,
  decision_reason TEXT,
  result TEXT
);
CREATE INDEX IF NOT EXISTS approvals_by_state ON approvals (state, expires_at);
`;

/** The run's approvals, in the same SQLite database and transactions as its keys and trace. */
export class ApprovalStore {
  readonly #sql: SqlStorage;
  /** The run the approvals belong to; read when a record is built, since the run loads after this store. */
  readonly #owner: () => ApprovalOwner | null;
  /**
   * How many approvals the run has, and how many are pending, kept in memory so a call of a run
   * without any reads none of them. Read from storage on first need; a write that can change them
   * drops them (read again on next need), and so must a transaction that fails (`forget`).
   */
  #counts: { total: number; pending: number } | null = null;

  constructor(sql: SqlStorage, owner: () => ApprovalOwner | null) {
    this.#sql = sql;
    this.#owner = owner;
  }

  /** Drops the counts kept in memory: the next look reads them from storage again. */
  forget(): void {
    this.#counts = null;
  }

  /** A new run was committed: it has no approval yet, so nothing needs reading to know it. */
  opened(): void {
    this.#counts = { total: 0, pending: 0 };
  }

  /** What a woken ledger's first read counted: nothing needs reading again to know it. */
  known(counts: { total: number; pending: number }): void {
    this.#counts = counts;
  }

  #counted(): { total: number; pending: number } {
    this.#counts ??= this.#sql
      .exec<{ total: number; pending: number }>(
        "SELECT COUNT(*) AS total, COALESCE(SUM(state = 'pending'), 0) AS pending FROM approvals",
      )
      .one();
    return this.#counts;
  }

  /** Opens a pending approval; its arguments are stored as canonical JSON, the form they were keyed by. */
  insert(approval: ApprovalRecord): void {
    this.#counts = null;
    this.#sql.exec(
      `INSERT INTO approvals (id, idempotency_key, tool, side_effect, args, args_digest, policy_version, reasons, state,
         requested_call_id, created_at, expires_at, cross_run, sla_due_at, approvers, policy_binding)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)`,
      approval.id,
      approval.idempotency_key,
      approval.tool,
      approval.side_effect,
      canonicalJson(approval.args),
      approval.args_digest,
      approval.policy_version,
      JSON.stringify(approval.reasons),
      approval.requested_call_id,
      Date.parse(approval.created_at),
      Date.parse(approval.expires_at),
      approval.earlier_effects.length > 0 || approval.limit
        ? JSON.stringify({ earlier_effects: approval.earlier_effects, limit: approval.limit })
        : null,
      approval.sla_due_at === null ? null : Date.parse(approval.sla_due_at),
      storedApprovers(approval),
      approval.policy_binding === null ? null : JSON.stringify(approval.policy_binding),
    );
  }

  /**
   * Records one operator's approval of an approval that needs more than one; it stays pending.
   * Stored in the same transaction as the decision's other writes, so a restart keeps it.
   */
  addApprover(id: string, approver: Approver): void {
    const approval = this.byId(id);
    if (!approval) return;
    this.#sql.exec(
      "UPDATE approvals SET approvers = ? WHERE id = ?",
      storedApprovers({ ...approval, approvers: [...approval.approvers, approver] }),
      id,
    );
  }

  /**
   * An operator's edit: the approval now binds the edited call (its arguments, digest, key and
   * reasons, and who approves it) and remembers the key it was asked under. The key's records are
   * moved by the same transaction's other writes.
   */
  applyEdit(id: string, edited: EditedApproval): void {
    this.#sql.exec(
      `UPDATE approvals SET idempotency_key = ?, args = ?, args_digest = ?, reasons = ?, approvers = ?,
         cross_run = ?, asked_key = COALESCE(asked_key, ?), edit = ? WHERE id = ?`,
      edited.idempotency_key,
      canonicalJson(edited.args),
      edited.args_digest,
      JSON.stringify(edited.reasons),
      storedApprovers(edited),
      edited.earlier_effects.length > 0 || edited.limit
        ? JSON.stringify({ earlier_effects: edited.earlier_effects, limit: edited.limit })
        : null,
      edited.edit.asked_key,
      JSON.stringify(edited.edit),
      id,
    );
  }

  /** The approval first asked under `key`, when an edit has since bound it to another key. */
  byAskedKey(key: string): ApprovalRecord | null {
    if (this.#counted().total === 0) return null;
    return this.#one("SELECT * FROM approvals WHERE asked_key = ? AND idempotency_key != ?", key, key);
  }

  /** Records that the approval was announced overdue; in the transaction that writes the announcement. */
  markEscalated(id: string, at: number): void {
    this.#sql.exec("UPDATE approvals SET escalated_at = ? WHERE id = ? AND escalated_at IS NULL", at, id);
  }

  /** When the next pending approval not yet announced overdue becomes overdue, or null. */
  nextEscalation(): number | null {
    if (this.#counted().pending === 0) return null;
    return this.#sql
      .exec<{ next: number | null }>(
        "SELECT MIN(sla_due_at) AS next FROM approvals WHERE state = 'pending' AND escalated_at IS NULL",
      )
      .one().next;
  }

  byKey(key: string): ApprovalRecord | null {
    if (this.#counted().total === 0) return null;
    return this.#one("SELECT * FROM approvals WHERE idempotency_key = ?", key);
  }

  byId(id: string): ApprovalRecord | null {
    return this.#one("SELECT * FROM approvals WHERE id = ?", id);
  }

  setState(
    id: string,
    state: ApprovalState,
    decision: ApprovalDecisionRecord | null,
    result: Envelope | null = null,
    execution: ApprovalExecution | null = null,
  ): void {
    this.#counts = null;
    if (decision) {
      this.#sql.exec(
        "UPDATE approvals SET state = ?, decided_at = ?, decided_by = ?, decided_by_name = ?, decision_reason = ? WHERE id = ?",
        state,
        decision.at,
        decision.by,
        decision.by_name,
        decision.reason,
        id,
      );
    } else {
      this.#sql.exec("UPDATE approvals SET state = ? WHERE id = ?", state, id);
    }
    if (result) this.#sql.exec("UPDATE approvals SET result = ? WHERE id = ?", JSON.stringify(result), id);
    if (execution) this.#sql.exec("UPDATE approvals SET execution = ? WHERE id = ?", execution, id);
  }

  /** An approved call's send ended in doubt: the approval stays approved, and says so. */
  markInDoubt(id: string): void {
    this.#sql.exec("UPDATE approvals SET execution = 'in_doubt' WHERE id = ? AND state = 'approved'", id);
  }

  /** Every pending approval of the run: the machine decides which of them can still execute. */
  pending(): ApprovalRecord[] {
    if (this.#counted().pending === 0) return [];
    return this.#all("SELECT * FROM approvals WHERE state = 'pending'");
  }

  nextExpiry(): number | null {
    if (this.#counted().pending === 0) return null;
    const row = this.#sql
      .exec<{ next: number | null }>("SELECT MIN(expires_at) AS next FROM approvals WHERE state = 'pending'")
      .one();
    return row.next;
  }

  #one(query: string, ...bindings: SqlStorageValue[]): ApprovalRecord | null {
    return this.#all(query, ...bindings)[0] ?? null;
  }

  #all(query: string, ...bindings: SqlStorageValue[]): ApprovalRecord[] {
    const owner = this.#owner() ?? { tenant: "", run_id: "" };
    const now = Date.now();
    return this.#sql
      .exec<ApprovalRow>(query, ...bindings)
      .toArray()
      .map((row) => ({
        id: row.id,
        tenant: owner.tenant,
        run_id: owner.run_id,
        tool: row.tool,
        side_effect: row.side_effect as SideEffect,
        idempotency_key: row.idempotency_key,
        args: JSON.parse(row.args) as Record<string, unknown>,
        args_digest: row.args_digest,
        policy_version: row.policy_version,
        policy_binding:
          row.policy_binding === null ? null : (JSON.parse(row.policy_binding) as PolicyBinding),
        reasons: JSON.parse(row.reasons) as string[],
        state: row.state as ApprovalState,
        execution: executionOfRow(row),
        requested_call_id: row.requested_call_id,
        created_at: new Date(row.created_at).toISOString(),
        expires_at: new Date(row.expires_at).toISOString(),
        sla_due_at: isoOrNull(row.sla_due_at),
        overdue: false,
        escalated_at: isoOrNull(row.escalated_at),
        decided_at: row.decided_at === null ? null : new Date(row.decided_at).toISOString(),
        decided_by: row.decided_by,
        decided_by_name: row.decided_by_name,
        decision_reason: row.decision_reason,
        result: row.result === null ? null : (JSON.parse(row.result) as Envelope),
        ...crossRunOf(row.cross_run),
        ...approversOf(row.approvers),
        // Kept with the run, which holds its approvals: the user is the run's, and never changes.
        user: approvalUserOf(owner.user),
        edit: row.edit ? editOf(row.edit) : null,
      }))
      .map((approval) => ({ ...approval, overdue: isOverdue(approval, now) }));
  }
}

/**
 * A stored edit. One stored before edits kept the asked call's cap reads as having none: a later
 * edit over a cap is then refused, as it was when that edit was made.
 */
function editOf(stored: string): ApprovalEdit {
  return { asked_limit: null, ...(JSON.parse(stored) as Partial<ApprovalEdit>) } as ApprovalEdit;
}

/**
 * What the call did, as recorded; a rejected or expired approval's call never left, and one that
 * settled before executions were recorded is read from its result (`approvals/execution.ts`).
 */
function executionOfRow(row: ApprovalRow): ApprovalExecution | null {
  if (row.execution !== null) return row.execution as ApprovalExecution;
  return executionOfState(
    row.state as ApprovalState,
    row.result === null ? null : (JSON.parse(row.result) as Envelope),
  );
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function storedApprovers(
  approval: Pick<ApprovalRecord, "approver_roles" | "approvals_required" | "approvers">,
): string | null {
  const { approver_roles: roles, approvals_required: required, approvers } = approval;
  if (roles.length === 0 && required === 1 && approvers.length === 0) return null;
  return JSON.stringify({ roles, required, approvers } satisfies StoredApprovers);
}

function approversOf(
  stored: string | null,
): Pick<ApprovalRecord, "approver_roles" | "approvals_required" | "approvers"> {
  if (stored === null) return { approver_roles: [], approvals_required: 1, approvers: [] };
  const parsed = JSON.parse(stored) as StoredApprovers;
  return { approver_roles: parsed.roles, approvals_required: parsed.required, approvers: parsed.approvers };
}

function crossRunOf(stored: string | null): Pick<ApprovalRecord, "earlier_effects" | "limit"> {
  if (stored === null) return { earlier_effects: [], limit: null };
  const parsed = JSON.parse(stored) as Pick<ApprovalRecord, "earlier_effects" | "limit">;
  return { earlier_effects: parsed.earlier_effects, limit: parsed.limit };
}

/**
 * Announces a run's approval changes on the approval webhook, in the background and at most once:
 * it is called once per committed change of state (each state is reached once), after the commit,
 * and never for a summary the directory is only sent again. A crash between the commit and the send
 * loses the announcement, as any best-effort hook may; the directory's copy goes through the
 * outbox instead, since operators act on it.
 */
export function announceApprovals(
  env: Env,
  waitUntil: (promise: Promise<unknown>) => void,
  tenant: string,
  summaries: readonly ApprovalSummary[],
): void {
  for (const summary of summaries) waitUntil(notifyApproval(env, tenant, summary));
}
