import type { ApprovalRecord } from "../approvals/model";
import { loadConfig } from "../config/load";
import { newCallId } from "../core/ids";
import type { TenantCheck } from "../effects/reasons";
import type { CallInput } from "../ledger/ledger-api";
import { type AgentCall, admitCall, type CallStep } from "../machine/admit";
import type { CallRecord, RunMeta, StoredRequest } from "../machine/run-state";
import { type Envelope, failure } from "../wire/envelope";
import { type ReadyCall, takeCall } from "./intake";
import { loadedRun, type RunPorts } from "./ports";
import { rateRefusal, toolLimited } from "./refusals";
import { pastPendingDeadline } from "./run-lifecycle";
import { executeAndSettle, joinInFlight } from "./send";
import { claimTenantWide } from "./tenant-wide";

/**
 * One tool call of this run, waiting for its approval's decision when the caller asked to
 * (`Prefer: wait`): until the approval's state changes, the call is asked again once, or the wait
 * ends, and the first answer stands.
 */
export async function agentCall(ports: RunPorts, input: CallInput): Promise<Envelope> {
  const envelope = await callOnce(ports, input);
  const wait = input.wait_ms ?? 0;
  const approval = envelope.approval;
  if (wait <= 0 || envelope.error?.code !== "approval_required" || approval?.state !== "pending") {
    return envelope;
  }
  const ms = Math.min(wait, Date.parse(approval.expires_at) - ports.now());
  if (!(await ports.waiters.wait(approval.id, ms))) return envelope;
  return callOnce(ports, { ...input, call_id: newCallId(), wait_ms: 0 });
}

/**
 * What happens to an agent's call, stage by stage: its pending run is created; the run's and the
 * tenant's call rates; intake (the run and its catalog, then resolve → validate → policy, the
 * digest, the key and the request: `workflow/intake-call.ts`); the tenant's limit on the tool; the
 * tenant-wide claim of a new effect; admit (`machine/admit.ts`, committed); then an answer, a join
 * of the identical call in flight, or execute and settle (`send.ts`).
 */
export async function callOnce(ports: RunPorts, input: CallInput): Promise<Envelope> {
  const late = await openPending(ports, input);
  if (late) return late;
  const limited = await rateLimited(ports, input);
  if (limited) return limited;
  const own = ports.reads.run();
  const taken = await takeCall(ports, own?.tenant === input.tenant ? own : null, input, true);
  if (taken.kind === "refused") {
    // What the refusal taught the run (a changed tool's new pin) is kept before it is answered.
    const { teaches } = taken;
    if (teaches) {
      const writes = () => ({ writes: teaches(loadedRun(ports.reads), ports.reads.pending()) });
      await ports.outbox.publish(ports.commit(writes).changed);
    }
    return taken.envelope;
  }
  const toolLimit = await toolLimited(ports, loadedRun(ports.reads), taken);
  if (toolLimit) return toolLimit;
  const claimed = await claimOfCall(ports, taken);
  if (claimed.kind === "refused") return claimed.envelope;
  const { call } = taken;
  const stored = call.key === null ? null : ports.reads.key(call.key, null);
  const admitted = await admit(ports, taken, claimed.check).finally(() => {
    if (claimed.check) ports.deciding.release(claimed.check.claim.key);
  });
  const { step, inflight, admission, approval } = admitted;
  countHighRisk(ports, call, stored, step, approval);
  switch (step.kind) {
    case "answer":
      return step.envelope;
    case "join":
      return joinInFlight(ports, step.key, call.call_id);
    case "send": {
      const { tool, args, key, request, settle_first_since } = step;
      const send = {
        callId: call.call_id,
        tool,
        key,
        request,
        args,
        fault: input.fault ?? null,
        ...(settle_first_since === undefined ? {} : { settleFirstSince: settle_first_since }),
      };
      return executeAndSettle(
        ports,
        inflight,
        { ...send, traceparent: call.traceparent ?? null },
        admission,
        approval,
      );
    }
  }
}

/** The run a call's token carries the open of, created on its first call; past its deadline, refused as the run would refuse it. */
async function openPending(ports: RunPorts, input: CallInput): Promise<Envelope | null> {
  if (ports.reads.run() || !input.open) return null;
  const late = pastPendingDeadline(input.open, ports.now());
  if (!late) {
    await ports.createPending(input.tenant, input.open);
    return null;
  }
  const { environment } = loadConfig(ports.env);
  return failure(
    { call_id: input.call_id, environment, tool: input.request.tool },
    { code: "budget_exhausted", message: late.message, details: { limit: late.limit } },
  );
}

/** The run's and the tenant's call rates: a refused call is no dispatch and commits nothing. */
async function rateLimited(ports: RunPorts, input: CallInput): Promise<Envelope | null> {
  const run = ports.reads.run();
  if (run?.tenant !== input.tenant) return null;
  const spec = await ports.rate.take();
  return spec ? rateRefusal(ports, loadedRun(ports.reads), input, spec) : null;
}

/**
 * The tenant-wide step of a call that may be a new effect (a valid write or destructive call whose
 * key this run has not recorded, `tenant-wide.ts`). Shards out of reach refuse the call before
 * anything is reserved or sent.
 */
async function claimOfCall(
  ports: RunPorts,
  { call, tenant }: ReadyCall,
): Promise<{ kind: "refused"; envelope: Envelope } | { kind: "ready"; check: TenantCheck | null }> {
  const { prepared, key } = call;
  const run = loadedRun(ports.reads);
  if (key === null || prepared.refusal !== null || run.state === "closed")
    return { kind: "ready", check: null };
  const { args } = prepared;
  const effect = { run, tool: prepared.tool, tenant, key, args, trace_args: call.trace_args, now: call.now };
  const step = await claimTenantWide(ports, { ...effect, replaces: null });
  if (step.kind !== "unreachable")
    return { kind: "ready", check: step.kind === "claimed" ? step.check : null };
  const context = {
    call_id: call.call_id,
    environment: run.environment,
    tool: prepared.toolName,
    idempotency_key: key,
  };
  return {
    kind: "refused",
    envelope: failure(context, {
      code: "transient_error",
      message:
        "The tenant's record of effects could not be reached, so nothing was reserved or sent. Make the identical call again.",
      side_effect_confirmed: false,
      retry_after_ms: 1_000,
    }),
  };
}

/**
 * Stage "admit". A read's admission waits in memory to commit with its outcome; everything else (a
 * key, an approval, a refusal, a replay) commits now, before anything leaves.
 */
async function admit(ports: RunPorts, { call, tenant }: ReadyCall, check: TenantCheck | null) {
  const value = check?.claim.value;
  const approvalSlaMs = tenant.approval_sla_s === undefined ? null : tenant.approval_sla_s * 1_000;
  const view = ports.reads.callView(
    call,
    { maxOpenApprovals: tenant.max_open_approvals, approvalSlaMs },
    check ? { check, per_run: (value && tenant.value_caps[value.currency]?.per_run) ?? null } : null,
  );
  const step = admitCall(view, call);
  // Learned before the commit, so the run's entry, if it has news, is written in it (a read's, in
  // the commit of its outcome).
  ports.outbox.learnCall(call.prepared.tool, call.prepared.args);
  const admission =
    step.kind === "send" && step.key === null ? ports.deferredReads.hold(call.digest, step.writes) : null;
  const { changed } = admission ? { changed: [] } : ports.commit(() => step);
  // Registered in the same synchronous turn as the reservation: an identical call arriving while
  // this one awaits anything must find it in flight, never a "sending" key to send again.
  const inflight = step.kind === "send" ? ports.inflight.mark(step.key) : null;
  // A keyed send rings the alarm after it, so a restart mid-send is still reconciled.
  if (step.kind === "send" && step.key !== null) await ports.alarm.schedule();
  // What a keyed send's admission wrote to the outbox (its effect's fate "sent" for the tenant's
  // shards, news for the run's entry) waits for the send: the settle's commit replaces it with the
  // send's outcome, and one delivery carries both. It is stored, with the alarm set, so a send that
  // never settles still has it delivered; an approval change is never held back. A read's
  // admission committed nothing: what the outbox holds (a new run's entry) goes with its outcome's.
  if (!admission && (step.kind !== "send" || step.key === null || changed.length > 0))
    await ports.outbox.publish(changed);
  // The key's approval as the admission read it: no admission approves or executes one, and a
  // send leaves its own key's approval as it was (the sweep expires only pending ones, and a key
  // sent is never held), so the high-risk count and the execution need not read it again.
  return { step, inflight, admission, approval: view.approval };
}

/**
 * The high-risk rates' share of a keyed call the machine decided (`metrics/events.ts`): a poll
 * counts nothing; a key stored with other bytes is an idempotency conflict; a send of a write or
 * destructive call whose policy requires an approval not granted for its key is a bypass. The
 * machine sends no such call; the count is there so the rate is measured, not assumed.
 */
function countHighRisk(
  ports: RunPorts,
  call: AgentCall,
  stored: CallRecord | null,
  step: CallStep,
  approval: ApprovalRecord | null,
): void {
  const { prepared, key, request } = call;
  if (key === null || prepared.refusal !== null || !prepared.tool) return;
  const [open] = step.writes;
  const poll = open?.kind === "trace_open" && open.entry.poll === true;
  const bytesOf = (r: StoredRequest | null) => (r ? JSON.stringify([r.method, r.target, r.body]) : null);
  const storedBytesDiffer =
    stored !== null && request !== null && bytesOf(stored.request) !== bytesOf(request);
  const granted = approval?.state === "approved" || approval?.state === "executed";
  const effect = prepared.tool.side_effect === "write" || prepared.tool.side_effect === "destructive";
  const sentWithoutRequiredApproval =
    step.kind === "send" && effect && prepared.approval.required && !granted;
  const run: RunMeta = loadedRun(ports.reads);
  ports.metrics.highRisk({ tenant: run.tenant, namespace: run.namespace }, prepared.tool.name, {
    poll,
    storedBytesDiffer,
    sentWithoutRequiredApproval,
  });
}
