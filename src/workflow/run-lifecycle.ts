import { loadConfig } from "../config/load";
import { differingFields } from "../core/canonical-json";
import type { OpenRunAnswer, OpenRunInput, PendingOpen, SessionState } from "../ledger/ledger-api";
import { type Charge, canChargeCall } from "../machine/budget";
import { toolOfRun } from "../machine/grants";
import { callAgainSentence } from "../machine/in-doubt";
import { alarmRings, endRun, reconcileInterrupted, retainUntil } from "../machine/run-events";
import type { RunMeta } from "../machine/run-state";
import { runStatus } from "../machine/run-status";
import type { Write } from "../machine/writes";
import { catalog } from "../tools";
import { currentPolicies } from "./intake-call";
import type { RunPorts } from "./ports";

/**
 * The run's own events (its end, the alarm): their delivery is waited for, so a run's end is in
 * the operators' list when the answer arrives.
 */
async function commitRunEvent(ports: RunPorts, writes: () => Write[]): Promise<void> {
  await ports.outbox.publish(ports.commit(() => ({ writes: writes() })).changed, true);
}

/** Ends the run: later calls are refused and its pending approvals expire, saying why. */
export async function end(ports: RunPorts, run: RunMeta): Promise<void> {
  await commitRunEvent(ports, () => endRun(run, ports.reads.pending(), ports.now()));
  // Answered once its tokens are back: a caller ending runs to make room sees the room at once.
  await ports.rate.released();
}

/**
 * An MCP session's request: whether it may continue ("live", its activity recorded), or not
 * ("ended"). A run past its deadline or idle longer than `idleMs` is ended here, so an abandoned
 * session holds nothing open; a closed one just refuses. An MCP session's tool call asks this
 * first, in the same request, and only a live session's call goes on to be admitted.
 */
export async function touchSession(
  ports: RunPorts,
  run: RunMeta,
  now: number,
  idleMs: number,
): Promise<SessionState> {
  if (run.state === "closed") return "ended";
  if (ports.sessionActive(run, now, idleMs)) return "live";
  await commitRunEvent(ports, () => endRun(run, ports.reads.pending(), now));
  return "ended";
}

/** A tool the catalog no longer serves: the call cannot be sent again at all. */
const UNKNOWN_TOOL_CALL_AGAIN =
  "Its tool is no longer in the catalog, so nothing sends it again: check with a read tool whether it happened.";

/**
 * The alarm's work on a loaded run: sends a restart cut off (left "sending", their trace entries
 * open) settle in doubt, approvals that can no longer execute expire (or escalate), and whatever
 * the directory is still owed is retried, until retention ends. Whether the run's retention has
 * passed, so its data goes now (not a moment before).
 */
export async function ringAlarm(ports: RunPorts, run: RunMeta): Promise<"retained" | "expired"> {
  const now = ports.now();
  // Judged in the commit's turn below: an approval asked meanwhile, of a tool not named here, waits for the next.
  const tools = ports.reads.pending().map((approval) => approval.tool);
  const policies = await currentPolicies(ports.env, run, tools);
  const escalationRole = loadConfig(ports.env).tenants[run.tenant]?.escalation_role ?? null;
  const interrupted = ports.reads.interruptedView(run);
  await commitRunEvent(ports, () => [
    ...reconcileInterrupted(interrupted, now, (name) => {
      const tool = toolOfRun(catalog, run, name);
      return tool ? callAgainSentence(tool) : UNKNOWN_TOOL_CALL_AGAIN;
    }),
    ...alarmRings(run, ports.reads.pending(), now, policies, escalationRole),
  ]);
  await ports.outbox.deliverOwed(run.tenant);
  // A receipt the audit log has not acknowledged keeps the run's storage: it is retried, not lost.
  return now >= retainUntil(run) && !ports.outbox.owesAudit() ? "expired" : "retained";
}

/**
 * Why a run its open stored nothing of may no longer be created: its deadline, counted from the
 * open, has passed (a run there may be one retention deleted). Null while it may.
 */
export function pastPendingDeadline(pending: PendingOpen, now: number): Exclude<Charge, { ok: true }> | null {
  const unspent = { calls_used: 0, writes_used: 0, destructive_used: 0 };
  const deadline = pending.opened_at + pending.limits.deadline_s * 1000;
  const charge = canChargeCall(pending.limits, unspent, deadline, now);
  return charge.ok ? null : charge;
}

/**
 * An open for a run that exists: only the same task's, with the same request, gets it back, or
 * the same tenant's reserved open of it (its session's run ids are random and signed, so another
 * open of one is the same session's).
 */
export function reopened(
  run: RunMeta,
  task: { key: string; request: Record<string, unknown> } | null,
  input: OpenRunInput,
  now: number,
): OpenRunAnswer {
  if (input.reserved && !input.task && !task && run.tenant === input.tenant) {
    return { kind: "reused", status: runStatus(run, now) };
  }
  if (!task || !input.task || task.key !== input.task.key || run.tenant !== input.tenant) {
    throw new Error("run already exists");
  }
  const fields = differingFields(task.request, input.task.request);
  return fields.length > 0 ? { kind: "conflict", fields } : { kind: "reused", status: runStatus(run, now) };
}
