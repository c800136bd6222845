import { knownEffect } from "../effects/known-effect";
import type { CallInput } from "../ledger/ledger-api";
import { context } from "../machine/answers";
import { toolOfRun } from "../machine/grants";
import type { RunMeta } from "../machine/run-state";
import { takeToolToken } from "../ratelimit/tool-limits";
import { catalog } from "../tools";
import { type Envelope, type FailureSpec, failure } from "../wire/envelope";
import { type ReadyCall, takeCall } from "./intake";
import type { RunPorts } from "./ports";

/**
 * The answer of a call the run's or the tenant's rate refused. Nothing is sent, but the call may
 * be the resend of a key whose earlier send may have acted: the refusal then says what is known of
 * that effect (null while in doubt or in flight, the stored outcome once completed), never "not
 * done" for one that may have happened, as intake's refusals do. The call's key is derived only
 * here, on a refusal of a call that is not a read, so an admitted call pays nothing for it.
 */
export async function rateRefusal(
  ports: RunPorts,
  run: RunMeta,
  input: CallInput,
  spec: FailureSpec,
): Promise<Envelope> {
  const plain = failure(
    { call_id: input.call_id, environment: run.environment, tool: input.request.tool },
    spec,
  );
  const named = input.request.tool;
  // A read named directly cannot have acted. Anything else goes through intake, which alone
  // resolves `use_tool`'s tool (named in its arguments) and a subset's tools of other namespaces.
  if (named === null || toolOfRun(catalog, run, named)?.side_effect === "read") return plain;
  const taken = await takeCall(ports, run, input);
  if (taken.kind !== "ready" || taken.call.key === null || taken.call.prepared.refusal !== null) return plain;
  const { key } = taken.call;
  const { tool } = taken.call.prepared;
  const inflight = ports.inflight.has(key);
  const record = ports.reads.key(key, null);
  if (!inflight && !record) return plain;
  const known = inflight ? { side_effect_confirmed: null, observed: null } : knownEffect(record);
  const ctx = context(run, input.call_id, tool.name, key, run.counters, ports.now(), {
    observed_state: known.observed,
  });
  return failure(ctx, {
    ...spec,
    side_effect_confirmed: known.side_effect_confirmed,
    external_id: known.external_id ?? null,
  });
}

/**
 * The tenant's limit on this tool (`tool_limits`), taken by a call that would be a new request:
 * a read, or a keyed call whose key this run has not recorded. A key already recorded is a
 * replay, a join, a wait for its approval or the resend of a send in doubt: it was counted when
 * it was first called, takes no token and is never refused here, so no answer to a resend says
 * "not done" of an effect its earlier send may have made. The key is looked at again after the
 * limiter answered: an identical call that recorded it meanwhile makes this one its join.
 */
export async function toolLimited(
  ports: RunPorts,
  run: RunMeta,
  { call, tenant }: ReadyCall,
): Promise<Envelope | null> {
  const { prepared, key } = call;
  if (prepared.refusal !== null || run.state === "closed") return null;
  const recorded = () => key !== null && (ports.inflight.has(key) || ports.reads.key(key, null) !== null);
  if (recorded()) return null;
  const refusal = await takeToolToken(ports.env, run.tenant, tenant.tool_limits, {
    namespace: prepared.tool.namespace,
    tool: prepared.tool.name,
    args: prepared.args,
  });
  if (!refusal || recorded()) return null;
  return failure({ call_id: call.call_id, environment: run.environment, tool: prepared.toolName }, refusal);
}
