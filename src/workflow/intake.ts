import type { CallInput } from "../ledger/ledger-api";
import { asEditedCall } from "../machine/edit";
import type { RunMeta } from "../machine/run-state";
import { intakeCall, type TakenCall } from "./intake-call";
import type { RunPorts } from "./ports";

/** A call intake accepted, with its tenant's settings. */
export type ReadyCall = Extract<TakenCall, { kind: "ready" }>;

/**
 * Stage "intake" (`workflow/intake-call.ts`) as this run takes it: a call whose key is the one an
 * operator's edit replaced (the agent resends what it asked for) becomes the edited call; the key
 * as asked has no record any more, and must never get one.
 */
export async function takeCall(
  ports: RunPorts,
  run: RunMeta | null,
  input: CallInput,
  countDiscovery = false,
): Promise<TakenCall> {
  const discovery = countDiscovery ? () => ports.reads.discoveryUsed() : undefined;
  const keys = {
    read: (key: string) => ports.reads.key(key, null),
    // A key an operator's edit replaced holds nothing any more: the call stands for the edited one.
    standsFor: (key: string) =>
      ports.reads.key(key, null) ? key : (ports.reads.approvalOfAskedKey(key)?.idempotency_key ?? key),
  };
  const taken = await intakeCall(ports.env, run, input, keys, discovery);
  if (taken.kind !== "ready") return taken;
  const { key } = taken.call;
  if (key === null || ports.inflight.has(key) || ports.reads.key(key, null)) return taken;
  const approval = ports.reads.approvalOfAskedKey(key);
  if (!approval) return taken;
  const record = ports.reads.key(approval.idempotency_key, null);
  return { ...taken, call: asEditedCall(taken.call, approval, record?.request ?? null) };
}
