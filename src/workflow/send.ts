import { type ApprovalRecord, approvalBlock } from "../approvals/model";
import { callAgainSentence } from "../machine/in-doubt";
import { joinedAnswer, settleSend } from "../machine/settle";
import { type ExecutionPlan, executeCall } from "../upstream/execute";
import type { Envelope } from "../wire/envelope";
import { type DeferredRead, type InflightAnswer, loadedRun, type RunPorts } from "./ports";

/** A call the machine said to send, as its workflow hands it to execution. */
export type Send = Omit<ExecutionPlan, "run" | "keeping" | "approval">;

/**
 * Stages "execute" (dispatch → classify → validate the output → shape → record:
 * `upstream/execute.ts`) and "settle" (`machine/settle.ts`, committed) for a call the machine said
 * to send, by an agent's call or an operator's approval.
 */
export async function executeAndSettle(
  ports: RunPorts,
  inflight: InflightAnswer | null,
  send: Send,
  admission: DeferredRead | null = null,
  /** The key's approval when the caller read it in this call; read here otherwise. */
  known?: ApprovalRecord | null,
): Promise<Envelope> {
  const { key } = send;
  const approval = known !== undefined ? known : key ? ports.reads.approvalOfKey(key) : null;
  try {
    const executed = await executeCall(ports.env, {
      ...send,
      approval: approval ? approvalBlock(approval) : null,
      run: () => loadedRun(ports.reads),
      keeping: ports.keeping,
    });
    const { result: settled, changed } = ports.commit(() => {
      executed.record();
      return settleSend({
        ...ports.reads.settlementView(key, approval),
        call_id: send.callId,
        admission: admission?.writes ?? null,
        envelope: executed.envelope,
        completion: executed.completion,
        taint: executed.taint,
        now: ports.now(),
        call_again: callAgainSentence(send.tool),
      });
    });
    // The outcome is durable now: identical calls get it without waiting for the directory.
    inflight?.resolve(settled.envelope);
    // A keyed send's answer waits for its delivery: when the agent has it, the tenant's effect
    // shards hold the effect's fate (another run's identical call meets it confirmed, not in
    // doubt), and nothing the send owes the directory is left to run beside the agent's next call.
    // A read's delivery (a run entry, at most) goes on in the background.
    await ports.outbox.publish(changed, changed.length > 0 || key !== null);
    return settled.envelope;
  } catch (error) {
    // A version this call saw counted as the newest at once: it may never be stored now.
    ports.keeping.results.forget();
    inflight?.reject(error);
    throw error;
  } finally {
    ports.inflight.done(key);
    if (admission) ports.deferredReads.release(admission);
  }
}

/** An identical call in flight answers this one too, once it has its envelope. */
export async function joinInFlight(ports: RunPorts, key: string, callId: string): Promise<Envelope> {
  const envelope = await ports.inflight.join(key);
  const joined = joinedAnswer(loadedRun(ports.reads), envelope, callId, ports.now());
  const { changed } = ports.commit(() => ({ writes: joined.writes }));
  await ports.outbox.publish(changed, true);
  return joined.envelope;
}
