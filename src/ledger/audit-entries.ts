import { type ApprovalRecord, approvalUserOf, WITHDRAWN_PREFIX } from "../approvals/model";
import type { SideEffect, ToolSpec } from "../catalog/define-tool";
import { toolRef } from "../catalog/subset";
import { newReceiptId } from "../core/ids";
import { knownEffect } from "../effects/known-effect";
import { toolOfRun } from "../machine/grants";
import type { CallRecord, RunMeta, TraceCompletion } from "../machine/run-state";
import type { DecisionSeen, Write } from "../machine/writes";
import { applyMasks } from "../shaping/mask";
import { catalog } from "../tools";
import type { AuditContract, AuditDraft, AuditEvent } from "../wire/audit";
import type { Envelope } from "../wire/envelope";
import type { LedgerStores } from "./commit";
import type { OpenCall } from "./run-store";

/**
 * What the audit log is told of a commit: one receipt per effect decision its writes make. A write
 * or destructive key settling (made, not made, in doubt, unknown, settled after doubt; reconciled
 * after a restart), an approval approved, rejected, expired or withdrawn, one approver of two, an edit. Each
 * is written to the run's outbox in the commit's own transaction (`commit.ts`), so the receipt
 * exists exactly when the decision does: a crash can delay its delivery, never lose or repeat it.
 */

type Settle = Extract<Write, { kind: "key_settle" }>;

/** What a settlement's receipt needs of the state before the writes apply: the key's record, its call. */
export interface AuditBefore {
  settles: Map<string, { record: CallRecord; call: OpenCall | null }>;
}

const EFFECTS = new Set(["write", "destructive"]);

/** Reads, before the writes apply, what they will change that a receipt records. Reads nothing for a read's commit. */
export function auditBefore(stores: LedgerStores, writes: readonly Write[]): AuditBefore {
  const settles = new Map<string, { record: CallRecord; call: OpenCall | null }>();
  for (const write of writes) {
    if (write.kind !== "key_settle") continue;
    const record = stores.keys.read(write.key, null);
    if (!record || !EFFECTS.has(record.side_effect)) continue;
    const callId = write.envelope?.call_id ?? null;
    const opened = writes.find(
      (other): other is Extract<Write, { kind: "trace_open" }> =>
        other.kind === "trace_open" && other.entry.call_id === callId,
    );
    const call = opened
      ? {
          actor: opened.entry.actor,
          actor_name: opened.entry.actor_name ?? null,
          args: opened.entry.args,
          call_digest: opened.entry.call_digest,
        }
      : callId
        ? stores.run.openEntry(callId)
        : null;
    settles.set(write.key, { record, call });
  }
  return { settles };
}

/** The receipts of a commit's writes, read from the state they left. */
export function auditDrafts(
  stores: LedgerStores,
  run: RunMeta,
  writes: readonly Write[],
  before: AuditBefore,
): AuditDraft[] {
  const drafts: AuditDraft[] = [];
  const approvedNow = new Set(
    writes.flatMap((write) =>
      write.kind === "approval_state" && write.state === "approved" ? [write.id] : [],
    ),
  );
  for (const write of writes) {
    switch (write.kind) {
      case "key_settle": {
        const prior = before.settles.get(write.key);
        if (prior) drafts.push(settled(stores, run, write, prior, completionOf(writes, write)));
        break;
      }
      case "approval_edit":
        drafts.push(...decided(stores, run, write.id, "approval.edited", write.edited.edit.at, write));
        break;
      case "approval_approver":
        // The approver whose approval executes the call is in the approval's own receipt.
        if (!approvedNow.has(write.id)) {
          drafts.push(...decided(stores, run, write.id, "approval.approver", write.approver.at, write));
        }
        break;
      case "approval_state": {
        const at = new Date(write.decision?.at ?? Date.now()).toISOString();
        const seen = write.decision;
        if (write.state === "approved")
          drafts.push(...decided(stores, run, write.id, "approval.approved", at, seen));
        else if (write.state === "rejected") {
          drafts.push(...decided(stores, run, write.id, "approval.rejected", at, seen));
        } else if (write.state === "expired") {
          const withdrawn = (write.decision?.reason ?? "").startsWith(WITHDRAWN_PREFIX);
          drafts.push(
            ...decided(stores, run, write.id, withdrawn ? "approval.withdrawn" : "approval.expired", at),
          );
        }
        break;
      }
      default:
        break;
    }
  }
  return drafts;
}

/** The trace completion of the settled call, committed beside its settlement. */
function completionOf(writes: readonly Write[], settle: Settle): TraceCompletion | null {
  const callId = settle.envelope?.call_id;
  for (const write of writes) {
    if (write.kind === "trace_close" && write.call_id === callId) return write.completion;
  }
  return null;
}

/**
 * The tool's contract as the run used it: the version the run pinned (the call was admitted under
 * it, `machine/tool-pins.ts`), or the run's catalog version for a run that pinned none.
 */
function contractOf(run: RunMeta, namespace: string, name: string): AuditContract {
  const pinned = run.tool_versions?.[toolRef({ namespace, name })];
  return pinned
    ? { kind: "tool_version", digest: pinned.version }
    : { kind: "catalog_version", digest: run.catalog_version };
}

/**
 * What every receipt of the run says first.
 */
function base(
  run: RunMeta,
  type: AuditEvent["type"],
  at: string,
  tool: ToolSpec | undefined,
  called: { name: string; side_effect: SideEffect },
): Pick<AuditEvent, "id" | "type" | "at" | "run_id" | "agent_profile" | "end_user" | "tool"> {
  return {
    id: newReceiptId(),
    type,
    at,
    run_id: run.run_id,
    agent_profile: run.profile ?? null,
    end_user: approvalUserOf(run.user),
    tool: {
      name: called.name,
      // A tool the catalog no longer has is named as the run's namespace holds it.
      namespace: tool?.namespace ?? run.namespace,
      side_effect: called.side_effect,
      contract: contractOf(run, tool?.namespace ?? run.namespace, called.name),
    },
  };
}

function settled(
  stores: LedgerStores,
  run: RunMeta,
  write: Settle,
  prior: { record: CallRecord; call: OpenCall | null },
  completion: TraceCompletion | null,
): AuditDraft {
  const { record, call } = prior;
  const tool = toolOfRun(catalog, run, record.tool);
  const approval = stores.approvals.byKey(write.key);
  const envelope = write.envelope;
  const known = knownEffect({ ...record, state: write.state, envelope });
  // What the answer says of the effect first: a key left in doubt may hold an answer proving it absent.
  const confirmed = envelope?.outcome === "success" ? true : (envelope?.error?.side_effect_confirmed ?? null);
  const outcome =
    confirmed === true
      ? "made"
      : confirmed === false
        ? "not_made"
        : write.state === "in_doubt"
          ? "in_doubt"
          : "unknown";
  const readBack = completion?.read_back ?? null;
  const type = write.reconciled ? "effect.reconciled" : "effect.outcome";
  const common = base(run, type, new Date(write.now).toISOString(), tool, {
    name: record.tool,
    side_effect: record.side_effect,
  });
  return {
    ...common,
    actor: write.reconciled ? { kind: "proxy", id: null, name: null } : actorOf(call),
    call: {
      call_id: envelope?.call_id ?? null,
      idempotency_key: write.key,
      args: call?.args ?? (approval ? masked(approval.args, tool) : null),
      args_digest: call?.call_digest ?? approval?.args_digest ?? null,
    },
    approval: approval ? approvalOf(approval, tool) : null,
    upstream: {
      outcome,
      status: completion?.upstream_status ?? null,
      error_code: envelope?.error?.code ?? null,
      external_id:
        typeof known.external_id === "string" ? known.external_id : (envelope?.error?.external_id ?? null),
      // Sent before (a resend), or holding an earlier answer that left it unknown, or read to settle.
      settled_after_doubt:
        record.state === "in_doubt" ||
        record.sends > 1 ||
        record.envelope !== null ||
        readBack?.kind === "settle",
      answer: answerOf(envelope),
    },
    read_back: readBack,
  };
}

/** An approval's decision (or one step of it), as it stands once the writes applied. */
function decided(
  stores: LedgerStores,
  run: RunMeta,
  id: string,
  type: AuditEvent["type"],
  at: string,
  seen: DecisionSeen | null = null,
): AuditDraft[] {
  const approval = stores.approvals.byId(id);
  if (!approval) return [];
  const tool = toolOfRun(catalog, run, approval.tool);
  const common = base(run, type, at, tool, { name: approval.tool, side_effect: approval.side_effect });
  const step = type === "approval.approver" ? approval.approvers.at(-1) : null;
  const editor = type === "approval.edited" ? approval.edit : null;
  const byOperator = step
    ? { id: step.operator, name: step.name }
    : editor
      ? { id: editor.by, name: editor.by_name }
      : approval.decided_by
        ? { id: approval.decided_by, name: approval.decided_by_name }
        : null;
  return [
    {
      ...common,
      actor:
        type === "approval.withdrawn"
          ? { kind: "agent", id: null, name: null }
          : byOperator
            ? { kind: "operator", ...byOperator }
            : { kind: "proxy", id: null, name: null },
      call: {
        call_id: approval.requested_call_id,
        idempotency_key: approval.idempotency_key,
        args: masked(approval.args, tool),
        args_digest: approval.args_digest,
      },
      approval: approvalOf(approval, tool, seen),
      upstream: null,
      read_back: null,
    },
  ];
}

function actorOf(call: OpenCall | null): AuditEvent["actor"] {
  if (call?.actor.startsWith("operator:")) return { kind: "operator", id: call.actor, name: call.actor_name };
  return { kind: "agent", id: null, name: null };
}

function masked(args: Record<string, unknown>, tool: ToolSpec | undefined): unknown {
  return tool ? applyMasks(args, tool.sensitive_args) : args;
}

function approvalOf(
  approval: ApprovalRecord,
  tool: ToolSpec | undefined,
  seen: DecisionSeen | null = null,
): NonNullable<AuditEvent["approval"]> {
  const edit = approval.edit;
  return {
    id: approval.id,
    state: approval.state,
    requested_at: approval.created_at,
    roles: approval.approver_roles,
    approvals_required: approval.approvals_required,
    approvers: approval.approvers,
    decided_by: approval.decided_by,
    decided_by_name: approval.decided_by_name,
    decided_at: approval.decided_at,
    reason: approval.decision_reason,
    seen: { args_digest: approval.args_digest, context_digest: seen?.context_digest ?? null },
    edit: edit
      ? {
          by: edit.by,
          by_name: edit.by_name,
          at: edit.at,
          fields: edit.fields,
          asked_args: masked(edit.asked_args, tool),
          asked_key: edit.asked_key,
        }
      : null,
    overrides: {
      cap: approval.limit,
      earlier_effects: approval.earlier_effects.length,
      duplicate_confirmed: seen?.duplicate_confirmed === true,
    },
  };
}

/** The answer the proxy kept for the key, without what changes per reply (call id, budget): what its digest covers. */
function answerOf(envelope: Envelope | null): unknown {
  if (!envelope) return null;
  return {
    outcome: envelope.outcome,
    data: envelope.data ?? null,
    error: envelope.error
      ? {
          code: envelope.error.code,
          side_effect_confirmed: envelope.error.side_effect_confirmed ?? null,
          external_id: envelope.error.external_id ?? null,
        }
      : null,
  };
}
