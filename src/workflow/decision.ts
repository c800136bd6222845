import { holdsRole } from "../approvals/approvers";
import type { ApprovalRecord } from "../approvals/model";
import { loadConfig } from "../config/load";
import { newCallId } from "../core/ids";
import type { TenantCheck } from "../effects/reasons";
import type { DecideInput, DecideResult } from "../ledger/ledger-api";
import { decideApproval, withdrawApproval } from "../machine/decide";
import { type EditPlan, prepareEdit } from "../machine/edit";
import { toolOfRun } from "../machine/grants";
import { approvingOf } from "../machine/late-decision";
import type { RunMeta } from "../machine/run-state";
import { catalog } from "../tools";
import type { Envelope } from "../wire/envelope";
import { currentPolicies } from "./intake-call";
import type { RunPorts } from "./ports";
import { executeAndSettle } from "./send";
import { claimTenantWide, releaseUncommitted } from "./tenant-wide";

type EditView = { key: string; check: TenantCheck | null; per_run: number | null };
type PreparedEdit =
  | { kind: "refused"; result: DecideResult }
  | { kind: "ready"; plan: EditPlan | null; view: EditView | null };

/**
 * An operator's decision. Approving executes the call exactly once, through the same dispatch
 * path and stored request the agent's call would use; a second approval of the same request finds
 * it no longer pending and executes nothing.
 */
export async function decide(ports: RunPorts, run: RunMeta, input: DecideInput): Promise<DecideResult> {
  // What the operator decided on: the approval as it stood when the decision reached the run.
  const seen = ports.reads.approval(input.approval_id);
  const pending = ports.reads.pending().map((approval) => approval.tool);
  const policies = await currentPolicies(ports.env, run, seen ? [seen.tool, ...pending] : pending);
  const callId = newCallId();
  const edit = await editOf(ports, run, input, seen);
  if (edit.kind === "refused") return edit.result;
  let call: Envelope | undefined;
  const tool = seen ? toolOfRun(catalog, run, seen.tool) : undefined;
  try {
    // The decided approval goes to the directory again whatever the decision: a refusal means the
    // operator decided on a copy the ledger had left behind, and their list heals from this.
    const { result: decided, changed } = ports.commit(
      () =>
        decideApproval(ports.reads.decisionView(input.approval_id, edit.view), {
          ...input,
          call_id: callId,
          now: ports.now(),
          policy_version: (seen && policies.get(seen.tool)?.version) ?? "",
          policies,
          edit: edit.plan,
          confirm_duplicate: input.confirm_duplicate ?? false,
          approving: approvingOf(input.decision, seen, tool, input.args),
        }),
      [input.approval_id],
    );
    // The approval as this decision left it: what a 200 describes unless it executes, whatever
    // another operator's decision changes while this one's delivery is awaited.
    const committed = ports.reads.approval(input.approval_id);
    const inflight = decided.kind === "send" ? ports.inflight.mark(decided.key) : null;
    if (decided.kind === "send") await ports.alarm.schedule();
    await ports.outbox.publish(changed, true);
    if (decided.kind === "done" && decided.refusal) {
      return { ok: false, ...decided.refusal, approval: ports.reads.approval(input.approval_id) };
    }
    if (decided.kind === "send") {
      const { key, request, tool, args } = decided;
      // Executed by an operator's decision: its span is in the run's own trace.
      call = await executeAndSettle(ports, inflight, {
        callId,
        tool,
        key,
        request,
        args,
        fault: null,
        traceparent: null,
      });
    } else if (committed) return { ok: true, approval: committed };
  } finally {
    if (edit.view?.check) {
      ports.deciding.release(edit.view.key);
      await releaseUncommitted(ports, run.tenant, edit.view.check);
    }
  }
  const approval = ports.reads.approval(input.approval_id);
  if (!approval) throw new Error(`approval ${input.approval_id} vanished while it was decided`);
  return call ? { ok: true, approval, call } : { ok: true, approval };
}

/**
 * Approve with edit, before the decision commits: the edited arguments are checked like a call
 * (`machine/edit.ts`), and the edited call, a new effect, takes its tenant-wide step, replacing
 * the asked call's claim. The edited key is "deciding" from its claim until the decision
 * committed (the caller releases it), as an agent's call's key is. Anything the machine decides
 * anyway (no such approval, no longer pending, a role not held) is left to it.
 */
export async function editOf(
  ports: RunPorts,
  run: RunMeta,
  input: DecideInput,
  approval: ApprovalRecord | null,
): Promise<PreparedEdit> {
  const none = { kind: "ready" as const, plan: null, view: null };
  if (input.decision !== "approve" || input.args === undefined || input.args === null) return none;
  const tool = approval ? toolOfRun(catalog, run, approval.tool) : undefined;
  const tenant = loadConfig(ports.env).tenants[run.tenant];
  if (!approval || !tool || !tenant || !holdsRole(approval.approver_roles, input.operator_roles)) return none;
  if (approval.state !== "pending") return none;
  const prepared = await prepareEdit(catalog, { run, tenant, tool, approval, args: input.args });
  if (prepared.kind === "unchanged") return none;
  if (prepared.kind === "refused") {
    const { refusal } = prepared;
    return {
      kind: "refused",
      result: { ok: false, code: "edit_refused", message: refusal.message, refusal, approval },
    };
  }
  const { plan } = prepared;
  const value = tool.value ? tenant.value_caps[tool.value.currency]?.per_run : undefined;
  const view = { key: plan.key, check: null, per_run: value ?? null };
  const step = await claimTenantWide(ports, {
    run,
    tool,
    tenant,
    key: plan.key,
    args: plan.args,
    trace_args: plan.trace_args,
    now: ports.now(),
    replaces: approval.idempotency_key,
  });
  if (step.kind === "none") return { kind: "ready", plan, view };
  if (step.kind === "claimed") return { kind: "ready", plan, view: { ...view, check: step.check } };
  return {
    kind: "refused",
    result: {
      ok: false,
      code: "conflict_error",
      message:
        "The tenant's record of effects could not be reached, so the edit was not approved and nothing was sent. Try again.",
      approval,
    },
  };
}

/**
 * The agent withdraws its approval request (an MCP client cancelled the task waiting for it): a
 * pending approval expires through the machine's expiry, committed like any decision so the
 * directory and the tenant's effect claims see it; a decided one is answered as it stands.
 */
export async function withdraw(
  ports: RunPorts,
  approvalId: string,
  reason: string | null,
): Promise<ApprovalRecord | null> {
  const { changed } = ports.commit(() => ({
    writes: withdrawApproval(ports.reads.approval(approvalId), reason, ports.now()),
  }));
  await ports.outbox.publish(changed, true);
  return ports.reads.approval(approvalId);
}
