import type { ApprovalRecord } from "../approvals/model";
import { type CurrentPolicy, policyOf } from "../approvals/policy-version";
import type { ToolSpec } from "../catalog/define-tool";
import { loadConfig } from "../config/load";
import type { TenantConfig } from "../config/tenants";
import { canonicalJson } from "../core/canonical-json";
import { callDigest, deriveIdempotencyKey } from "../core/idempotency-key";
import type { TraceParent } from "../core/trace-context";
import { knownEffect } from "../effects/known-effect";
import type { Env } from "../env";
import type { AgentCall } from "../machine/admit";
import { context } from "../machine/answers";
import { grantedTools, MAX_DISCOVERY_CALLS, reachOf, runTools, toolOfRun } from "../machine/grants";
import { type CallRequest, type CallScope, prepareCall } from "../machine/prepare";
import { buildRequest } from "../machine/request";
import { refuseRetired } from "../machine/resolve";
import type { CallRecord, RunMeta } from "../machine/run-state";
import { withTaint } from "../machine/taint";
import { checkPin, type ToolPins } from "../machine/tool-pins";
import { sweepApprovals, type Write } from "../machine/writes";
import { refuseUnfitFault } from "../scenarios/accept";
import type { FaultPlan } from "../scenarios/modes";
import { applyMasks } from "../shaping/mask";
import { catalog, discoveryTools } from "../tools";
import { type Envelope, type FailureSpec, failure } from "../wire/envelope";

/** A tool call as the run's ledger receives it from the door. */
export interface AgentCallInput {
  call_id: string;
  request: CallRequest;
  /** Orchestrator-supplied intent nonce (a header, never a model argument). */
  intent: string | null;
  /** Orchestrator-supplied X-Sandbox-Fault for this call's first upstream request (sandbox only). */
  fault?: FaultPlan | null;
  /**
   * How long the call may wait for a pending approval's decision before it answers (`Prefer: wait`):
   * 0 or absent answers at once.
   */
  wait_ms?: number;
  /** The caller's W3C trace context (`traceparent`), already parsed: null when absent or malformed. */
  traceparent?: TraceParent | null;
}

type Refused = Extract<TakenCall, { kind: "refused" }>;

export type TakenCall =
  /**
   * `teaches`: what the refusal teaches the run (a changed tool's new pin, and the expiry of its
   * approvals asked under the old one), as writes the caller commits, made from the run and its
   * pending approvals as that commit reads them.
   */
  | {
      kind: "refused";
      envelope: Envelope;
      teaches?: (run: RunMeta, pending: readonly ApprovalRecord[]) => Write[];
    }
  | { kind: "ready"; call: AgentCall; tenant: TenantConfig };

/**
 * Stage "intake": everything before the admission machine. The run must exist; then prepare
 * (resolve → validate → policy), the tool's version against the run's pin of it, the run's taint,
 * the fault's fit, the repeat digest, the idempotency key and the exact upstream request. A refusal
 * here is an orchestrator's or a deploy's, not the agent's: it costs no budget and commits nothing
 * but what it teaches the run (a changed tool's new pin).
 */
export async function intakeCall(
  env: Env,
  run: RunMeta | null,
  input: AgentCallInput,
  /**
   * The run's key records, for a refusal that must not deny an effect its key made, and the key a
   * call's key stands for (an operator's edit replaced it by the edited call's).
   */
  keys: { read(key: string, fallback: null): CallRecord | null; standsFor?(key: string): string },
  /**
   * How many find_tools and use_tool calls the run made so far; asked only by a call of one of them,
   * so no other call reads the count.
   */
  discoveryUsed: () => number = () => 0,
): Promise<TakenCall> {
  if (!run) {
    return refused(
      failure(
        { call_id: input.call_id, environment: loadConfig(env).environment },
        { code: "not_found", message: "This run does not exist or its data has expired." },
      ),
    );
  }
  const tenant = tenantOf(env, run);
  const validated = prepareCall(catalog, callScope(run, tenant, discoveryUsed), input.request, {
    tenantId: run.tenant,
    tenant,
    user: run.user ?? null,
  });
  const prepared = withTaint(validated, run.tainted_by, tenant.tainted_runs);
  // The digest and the key are both computed from the validated arguments, so whatever the agent
  // sent that validation dropped or normalised cannot make "the same call" look different to one of them.
  const digestArgs = prepared.args ?? prepared.rawArgs;
  // Written once as canonical JSON for both, and hashed side by side.
  const argsJson = canonicalJson(digestArgs ?? null);
  // The key is the validated call's, even when the run's taint refuses it: that refusal may meet
  // the resend of a call made before the taint, and must say what its key made (admit.ts).
  const valid = validated.refusal === null ? validated : null;
  const [digest, key] = await Promise.all([
    callDigest(prepared.toolName ?? "", digestArgs, argsJson),
    valid && valid.tool.side_effect !== "read"
      ? deriveIdempotencyKey(
          {
            tenant: run.tenant,
            runId: run.run_id,
            tool: valid.tool.name,
            args: valid.args,
            intent: input.intent,
          },
          valid.args === digestArgs ? argsJson : undefined,
        )
      : null,
  ]);
  // Refused before admission, like a malformed header or a deploy's change: it costs no budget and
  // sends nothing, but an earlier call under the same key may have acted: the refusal says what is
  // known of that effect, never "not done" for one that happened.
  const knowing = (spec: FailureSpec): Envelope => {
    const named = key === null ? null : (keys.standsFor?.(key) ?? key);
    const known = knownEffect(named ? keys.read(named, null) : null);
    const ctx = context(run, input.call_id, prepared.toolName, named, run.counters, Date.now(), {
      observed_state: known.observed,
    });
    return failure(ctx, {
      ...spec,
      side_effect_confirmed: known.side_effect_confirmed,
      external_id: known.external_id ?? null,
    });
  };
  const retired = validated.tool ? refuseRetired(validated.tool, Date.now()) : null;
  if (retired) return refused(knowing(retired));
  const pin = await pinOf(run, validated.tool, tenant);
  if (pin.kind === "changed")
    return { kind: "refused", envelope: knowing(pin.refusal), teaches: pin.teaches };
  const unfit = refuseUnfitFault(input.fault ?? null, prepared.tool);
  if (unfit) return refused(knowing(unfit));
  const policy = key && valid ? await currentPolicy(valid.tool, tenant) : null;
  const call: AgentCall = {
    call_id: input.call_id,
    now: Date.now(),
    prepared,
    digest,
    key,
    // A built-in tool is answered from the run's own storage: it has no upstream request.
    request:
      prepared.refusal === null && valid && valid.tool.upstream !== null
        ? buildRequest(valid.tool, valid.args, { key, callId: input.call_id })
        : null,
    // Every keyed call is judged under its tool's current policy: a held key's approval asked under
    // another one can no longer be granted, even when the new policy would not ask for a human at all.
    policy_version: policy?.version ?? null,
    policy,
    pins: pin.pins,
    trace_args: prepared.tool
      ? applyMasks(prepared.args ?? prepared.rawArgs, prepared.tool.sensitive_args)
      : prepared.rawArgs,
    traceparent: input.traceparent ?? null,
    ...((input.wait_ms ?? 0) > 0 ? { waits: true } : {}),
  };
  return { kind: "ready", call, tenant };
}

/**
 * The called tool's version against the run's pin of it (`machine/tool-pins.ts`): pinned with the
 * call when new, refused once when it changed (the refusal's writes pin the version the run now
 * knows). A run that no longer admits calls is answered by admission instead, as before.
 */
async function pinOf(
  run: RunMeta,
  tool: ToolSpec | null,
  tenant: TenantConfig,
): Promise<
  | { kind: "ready"; pins: ToolPins | null }
  | { kind: "changed"; refusal: FailureSpec; teaches: NonNullable<Refused["teaches"]> }
> {
  const now = Date.now();
  if (!tool || run.state === "closed" || now >= run.deadline_at) return { kind: "ready", pins: null };
  const check = checkPin(run.tool_versions, tool, await catalog.toolVersion(tool));
  if (check.kind === "same") return { kind: "ready", pins: null };
  if (check.kind === "new") return { kind: "ready", pins: check.pins };
  // Its approvals asked under the old version can no longer execute: they expire now, saying why.
  const policies = new Map([[tool.name, await currentPolicy(tool, tenant)]]);
  return {
    kind: "changed",
    refusal: check.refusal,
    teaches: (current, pending) => [
      { kind: "tool_pins", pins: check.pins },
      ...sweepApprovals(
        current,
        pending.filter((approval) => approval.tool === tool.name),
        now,
        policies,
      ),
    ],
  };
}

/** A run's direct tools and, for a run opened with a subset, what it reaches through discovery. */
function callScope(run: RunMeta, tenant: TenantConfig, discoveryUsed: () => number): CallScope {
  return {
    tools: runTools(catalog, run, discoveryTools(run.namespace)),
    // Asked only by use_tool: no other call lists what the tenant grants the run.
    get granted() {
      return grantedTools(catalog, reachOf(run), tenant.namespaces);
    },
    get discovery_left() {
      return MAX_DISCOVERY_CALLS - discoveryUsed();
    },
  };
}

function tenantOf(env: Env, run: RunMeta): TenantConfig {
  const tenant = loadConfig(env).tenants[run.tenant];
  if (!tenant) throw new Error(`tenant ${run.tenant} is no longer configured`);
  return tenant;
}

/** The policy a tool's calls are asked and decided under now, for the tenant (`approvals/policy-version.ts`). */
function currentPolicy(tool: ToolSpec, tenant: TenantConfig): Promise<CurrentPolicy> {
  return catalog.toolVersion(tool).then((version) => policyOf(tool, version, tenant));
}

/**
 * The policy each named tool's approvals are judged under now, as the run finds its tools (null: no
 * longer one of its tools): approvals asked under another expire, saying what changed.
 */
export async function currentPolicies(
  env: Env,
  run: RunMeta,
  tools: Iterable<string>,
): Promise<Map<string, CurrentPolicy | null>> {
  const tenant = tenantOf(env, run);
  const policies = new Map<string, CurrentPolicy | null>();
  for (const name of new Set(tools)) {
    const tool = toolOfRun(catalog, run, name);
    policies.set(name, tool ? await currentPolicy(tool, tenant) : null);
  }
  return policies;
}

function refused(envelope: Envelope): TakenCall {
  return { kind: "refused", envelope };
}
