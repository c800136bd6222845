import { type Approver, approvalProgress, holdsRole, samePerson } from "../approvals/approvers";
import { type ApprovalRecord, type EditedApproval, WITHDRAWN_PREFIX } from "../approvals/model";
import type { ToolSpec } from "../catalog/define-tool";
import { canonicalJson } from "../core/canonical-json";
import { crossRunReasons, effectsToConfirm, type TenantCheck } from "../effects/reasons";
import { applyMasks } from "../shaping/mask";
import type { CapLimit } from "../wire/effects";
import { spendEffect } from "./budget";
import type { EditPlan } from "./edit";
import { type Approving, decidedAgain, editedSince } from "./late-decision";
import type { CallRecord, RunMeta, StoredRequest } from "./run-state";
import {
  type ApprovalDecisionRecord,
  type DecisionSeen,
  expireWrite,
  type PolicyNow,
  sendKey,
  type Write,
  whyCannotExecute,
} from "./writes";

/**
 * The admission machine's event "an operator decides". Only an operator holding one of the
 * approval's roles decides (anyone else is refused, naming them). Deciding a decided approval the
 * same way again (an approval with the same arguments) changes nothing; any other way is a
 * conflict, as is approving arguments another operator's edit replaced after the decision was made
 * (`late-decision.ts`). Approving spends the run's effect
 * budget now (the cap counts executions) and sends the key's stored request: the same bytes the
 * agent's call would send. An approval that needs two approvers records the first approval and
 * stays pending ("1 of 2"); only a second one, from another person, executes it. One rejection by
 * anyone holding the role ends it.
 *
 * Approve with edit: the operator's arguments (checked by `edit.ts`) replace the call as asked. The
 * approval binds the edited call from then on: its arguments, digest and key, the reasons its
 * tenant-wide step found, and who must approve it (never fewer or lower than before). The held key
 * as asked is dropped (its claim is released) and the edited key held in its place, so the call as
 * asked can never be sent; the agent's resend of it is answered with the edited call. The editor's
 * approval counts as the first of the edited call. An edit that brings what the approval did not
 * show is refused: another run's effect on a new business thing (unless the operator confirms they
 * mean to repeat it), or a value cap the call as asked did not exceed.
 */

export interface Decision {
  decision: "approve" | "reject";
  operator: string;
  /** The operator's display name from OPERATOR_KEYS, recorded with the decision and the execution. */
  operator_name: string | null;
  /** The roles the operator's key holds in OPERATOR_KEYS. */
  operator_roles: readonly string[];
  reason: string | null;
  call_id: string;
  now: number;
  policy_version: string;
  /**
   * The policy of each tool of the run's pending approvals now (`writes.ts`): when given, the
   * decided approval and the others its execution sweeps are each judged under their own tool's.
   */
  policies?: PolicyNow;
  /** The arguments the operator approves instead of the asked ones, prepared by `edit.ts`. */
  edit?: EditPlan | null;
  /** The operator saw the earlier effects of other runs the edited call repeats, and approves it anyway. */
  confirm_duplicate?: boolean;
  /** The digest of the decision context the operator saw, carried to the audit receipt. */
  context_digest?: string | null;
  /**
   * What an approval approves, as its operator decided it (`late-decision.ts`); absent, it approves
   * the approval's arguments as they are when it applies.
   */
  approving?: Approving | null;
}

/** What the ledger read for a decision, in the same synchronous turn that applies the writes. */
export interface DecisionView {
  run: RunMeta;
  approval: ApprovalRecord | null;
  /** The call record of the approval's key. */
  record: CallRecord | null;
  /** The approval's tool, if the catalog still has it. */
  tool: ToolSpec | undefined;
  /** The run's pending approvals: an approval's execution may spend the budget others need. */
  pending: readonly ApprovalRecord[];
  /** For an edit: what the run already holds under the edited key, and the tenant-wide step of it. */
  edit?: EditView | null;
}

export interface EditView {
  /** The record of the edited call's key, when the run already has that call. */
  record: CallRecord | null;
  /** The edited call's claim on the tenant's shared state; null when its tool's effect has no identity. */
  check: TenantCheck | null;
  /** The run's own value cap, were the edited call to replace the asked one. */
  run_over: CapLimit | null;
}

export type Refusal =
  | {
      code: "not_found" | "conflict_error";
      message: string;
      /**
       * Why an edit was refused when the operator may still act: it repeats another run's effect
       * they did not confirm, or it would exceed a cap the call as asked did not.
       */
      reason?: "duplicate_unconfirmed" | "edit_over_cap";
    }
  /** The operator holds none of the roles whose decision counts: `roles` names them. */
  | { code: "permission_error"; message: string; roles: string[] };

export type DecideStep =
  | { kind: "done"; writes: Write[]; refusal: Refusal | null }
  | {
      kind: "send";
      writes: Write[];
      key: string;
      request: StoredRequest;
      tool: ToolSpec;
      /** The approved arguments, as the approval keeps them. */
      args: Record<string, unknown>;
    };

export function decideApproval(view: DecisionView, decision: Decision): DecideStep {
  const { run, approval, record, tool } = view;
  if (!approval) return refused({ code: "not_found", message: "No such approval." });
  if (!holdsRole(approval.approver_roles, decision.operator_roles)) {
    return refused(roleRefusal(approval.approver_roles, decision.operator_roles));
  }
  if (approval.state !== "pending") {
    return refusedOrDone(decidedAgain(approval, decision.decision, decision.approving));
  }
  const why = whyCannotExecute(
    run,
    run.counters,
    approval,
    decision.now,
    decision.policies ?? decision.policy_version,
  );
  if (why) {
    return refused({ code: "conflict_error", message: `This approval can no longer be granted: ${why}.` }, [
      expireWrite(approval.id, why, decision.now),
    ]);
  }
  const decided: ApprovalDecisionRecord = {
    at: decision.now,
    by: decision.operator,
    by_name: decision.operator_name,
    reason: decision.reason,
    ...seenOf(decision),
  };
  if (decision.decision === "reject") {
    return {
      kind: "done",
      writes: [{ kind: "approval_state", id: approval.id, state: "rejected", decision: decided }],
      refusal: null,
    };
  }
  const moved = editedSince(approval, decision.approving, Boolean(decision.edit));
  if (moved) return refused(moved);
  if (!tool) return refused({ code: "conflict_error", message: "The tool no longer exists." });
  if (!record) {
    return refused({
      code: "conflict_error",
      message: "This approval's request was not kept; ask the agent to make the call again.",
    });
  }
  const approver: Approver = {
    operator: decision.operator,
    name: decision.operator_name,
    at: new Date(decision.now).toISOString(),
  };
  if (decision.edit) return approveEdited(view, approval, record, tool, decision, decided, approver);
  const step = approve(view, approval, record, tool, decision, decided);
  if (approval.approvals_required === 1) return step;
  // More than one approver: each is recorded, and only the last one's approval executes.
  const earlier = approval.approvers.find((other) => samePerson(other, approver));
  if (earlier) return refused(approvedAlready(approval, earlier, approver));
  const vote: Write = { kind: "approval_approver", id: approval.id, approver, ...seenOf(decision) };
  if (approval.approvers.length + 1 < approval.approvals_required) {
    return { kind: "done", writes: [vote], refusal: null };
  }
  return { ...step, writes: [vote, ...step.writes] };
}

/**
 * What the operator said they saw (the decision context's digest) and confirmed (a repeat of another
 * run's effect), carried on the decision's writes to its audit receipt; nothing when they said nothing.
 */
function seenOf(decision: Decision): DecisionSeen {
  return {
    ...(decision.context_digest ? { context_digest: decision.context_digest } : {}),
    ...(decision.confirm_duplicate ? { duplicate_confirmed: true as const } : {}),
  };
}

function roleRefusal(
  roles: readonly string[],
  held: readonly string[],
  what = "decide this approval",
): Refusal {
  const named = roles.map((role) => `"${role}"`).join(" or ");
  return {
    code: "permission_error",
    message: `Only an operator holding the role ${named} may ${what}; your key holds ${
      held.length > 0 ? held.map((role) => `"${role}"`).join(", ") : "no role"
    }.`,
    roles: [...roles],
  };
}

/** One person approving twice (the same id, or another key under the same name) counts once: refused. */
function approvedAlready(approval: ApprovalRecord, earlier: Approver, now: Approver): Refusal {
  const who =
    earlier.operator === now.operator
      ? "You already approved this"
      : `${earlier.name ?? earlier.operator} already approved this with another key`;
  const roles =
    approval.approver_roles.length > 0
      ? ` holding ${approval.approver_roles.map((role) => `"${role}"`).join(" or ")}`
      : "";
  return {
    code: "conflict_error",
    message: `${who} (${approvalProgress(approval.approvers, approval.approvals_required)}): it needs a second, different operator${roles}.`,
  };
}

/** Approve with edit: the approval binds the edited call; it executes once enough people approved it. */
function approveEdited(
  view: DecisionView,
  approval: ApprovalRecord,
  record: CallRecord,
  tool: ToolSpec,
  decision: Decision,
  decided: ApprovalDecisionRecord,
  approver: Approver,
): DecideStep {
  const plan = decision.edit as EditPlan;
  const edit = view.edit ?? { record: null, check: null, run_over: null };
  if (plan.based_on !== approval.args_digest) {
    return refused({
      code: "conflict_error",
      message:
        "Another operator changed this approval's arguments while you edited them; your edit was not applied. Look at it again.",
    });
  }
  if (edit.record) {
    return refused({
      code: "conflict_error",
      message: `The edited arguments are those of another call of this run (${edit.record.state}). Reject this approval instead; that call stands on its own.`,
    });
  }
  if (!holdsRole(plan.requirement.roles, decision.operator_roles)) {
    return refused(roleRefusal(plan.requirement.roles, decision.operator_roles, "approve this edit"));
  }
  const earlier = edit.check ? effectsToConfirm(edit.check) : [];
  const limit = edit.run_over ?? edit.check?.over ?? null;
  // What the call as asked exceeded, not the edit this one replaces: an edit back under the cap
  // must not narrow what a later edit may do, nor make its refusal say the asked call fit.
  const askedLimit = approval.edit ? approval.edit.asked_limit : approval.limit;
  const unseenEarlier = earlier.length > 0 && !sameIdentity(approval, earlier[0]?.identity);
  if (unseenEarlier && !decision.confirm_duplicate) {
    const [first] = earlier;
    return refused({
      code: "conflict_error",
      reason: "duplicate_unconfirmed",
      message: `The edited call acts on a business thing another run already acted on (${first?.tool} in run ${first?.run_id} at ${first?.at}, ${first?.outcome.replace("_", " ")}). Check the runs, then approve the edit with confirm_duplicate: true if that is what you mean.`,
    });
  }
  // Over a cap only where the approval showed the call as asked over that same cap: another cap, or
  // the same cap of another subject, is one no operator was shown.
  if (limit && !(askedLimit && sameCap(askedLimit, limit))) {
    const subject = limit.subject ? ` for ${limit.subject}` : "";
    return refused({
      code: "conflict_error",
      reason: "edit_over_cap",
      message: `The edited call would exceed the ${limit.cap} ${limit.currency} cap${subject} (${limit.used} used and ${limit.reserved} reserved of ${limit.limit}; it moves ${limit.amount}), which the approval did not show the call as asked exceeding. Lower the amount, or reject.`,
    });
  }
  const required = plan.requirement.approvals;
  // Earlier approvals were of other arguments: the editor's is the first of the edited call.
  const approvers = [approver];
  const edited: EditedApproval = {
    idempotency_key: plan.key,
    args: plan.args,
    args_digest: plan.digest,
    reasons: [...plan.policy_reasons, ...crossRunReasons(earlier, limit)],
    approver_roles: plan.requirement.roles,
    approvals_required: required,
    approvers: required > 1 ? approvers : [],
    earlier_effects: earlier,
    limit,
    edit: {
      asked_args: approval.edit?.asked_args ?? approval.args,
      asked_key: approval.edit?.asked_key ?? approval.idempotency_key,
      asked_limit: askedLimit,
      fields: plan.fields,
      by: decision.operator,
      by_name: decision.operator_name,
      at: new Date(decision.now).toISOString(),
    },
  };
  const held: CallRecord = {
    key: plan.key,
    tool: tool.name,
    side_effect: tool.side_effect,
    state: "held",
    request: plan.request,
    envelope: null,
    sends: 0,
  };
  const writes: Write[] = [
    { kind: "approval_edit", id: approval.id, edited, ...seenOf(decision) },
    { kind: "key_drop", key: record.key },
    { kind: "key_hold", record: held, now: decision.now },
  ];
  if (edit.check) {
    const { check } = edit;
    writes.push({
      kind: "effect_claim",
      key: plan.key,
      shards: check.shards,
      value: check.claim.value,
      over_cap: limit !== null,
    });
  }
  if (approvers.length < required) return { kind: "done", writes, refusal: null };
  const step = approve(view, { ...approval, ...edited }, held, tool, decision, decided);
  return { ...step, writes: [...writes, ...step.writes] };
}

/** Whether two cap verdicts name one cap: its kind, currency and subject. */
function sameCap(shown: CapLimit, now: CapLimit): boolean {
  return shown.cap === now.cap && shown.currency === now.currency && shown.subject === now.subject;
}

/** Whether the approval already showed earlier effects on this identity (the edit kept the business thing). */
function sameIdentity(approval: ApprovalRecord, identity: Record<string, unknown> | undefined): boolean {
  const [shown] = approval.earlier_effects;
  return (
    shown !== undefined && identity !== undefined && canonicalJson(shown.identity) === canonicalJson(identity)
  );
}

function approve(
  view: DecisionView,
  approval: ApprovalRecord,
  record: CallRecord,
  tool: ToolSpec,
  decision: Decision,
  decided: ApprovalDecisionRecord,
): DecideStep {
  const { run } = view;
  // The approval itself is pending until these writes apply; it is the one being executed.
  const others = view.pending.filter((other) => other.id !== approval.id);
  return {
    kind: "send",
    key: record.key,
    request: record.request,
    tool,
    args: approval.args,
    writes: [
      { kind: "approval_state", id: approval.id, state: "approved", decision: decided },
      {
        kind: "trace_open",
        entry: {
          call_id: decision.call_id,
          actor: decision.operator,
          actor_name: decision.operator_name,
          started_at: decision.now,
          tool: tool.name,
          side_effect: tool.side_effect,
          args: approval.args,
          call_digest: approval.args_digest,
          idempotency_key: record.key,
          catalog_version: run.catalog_version,
          ...(approval.edit
            ? {
                edit: {
                  asked_args: applyMasks(approval.edit.asked_args, tool.sensitive_args),
                  fields: approval.edit.fields,
                  by: approval.edit.by,
                  by_name: approval.edit.by_name,
                },
              }
            : {}),
        },
      },
      ...sendKey(
        run,
        record,
        spendEffect(tool.side_effect, run.counters),
        others,
        decision.now,
        decision.policies ?? decision.policy_version,
      ),
    ],
  };
}

function refusedOrDone(refusal: Refusal | null): DecideStep {
  return { kind: "done", writes: [], refusal };
}

function refused(refusal: Refusal, writes: Write[] = []): DecideStep {
  return { kind: "done", writes, refusal };
}

/**
 * The admission machine's event "the agent withdraws its request" (an MCP client cancels the task
 * that waits for it): a pending approval expires, saying why, so no decision can execute it later.
 * One already decided is left as it is; the caller reads its state.
 */
export function withdrawApproval(
  approval: ApprovalRecord | null,
  reason: string | null,
  now: number,
): Write[] {
  if (approval?.state !== "pending") return [];
  return [expireWrite(approval.id, reason ? `${WITHDRAWN_PREFIX}: ${reason}` : WITHDRAWN_PREFIX, now)];
}
