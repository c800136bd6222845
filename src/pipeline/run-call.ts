import { policyVersion } from "../approvals/policy-version";
import type { ToolSpec } from "../catalog/define-tool";
import { loadConfig } from "../config/load";
import type { TenantConfig } from "../config/tenants";
import { callDigest, deriveIdempotencyKey } from "../core/idempotency-key";
import type { Env } from "../env";
import type { CallInput } from "../ledger/ledger-api";
import type { ResultStore } from "../ledger/result-store";
import type { ScenarioStore } from "../ledger/scenario-store";
import { refuseUnfitFault } from "../scenarios/accept";
import { injectFaults } from "../scenarios/inject";
import type { FaultPlan } from "../scenarios/modes";
import { applyMasks } from "../shaping/mask";
import { catalog } from "../tools";
import { LEDGER_BINDING } from "../tools/builtins";
import { resolveUpstream, type Upstream } from "../upstream/bindings";
import { CREDENTIAL_MARGIN_MS, credentialExpiry, issueUpstreamCredential } from "../upstream/credential";
import { type ApprovalBlock, type Envelope, type EnvelopeContext, failure, success } from "../wire/envelope";
import { type AgentCall, admitCall, type CallStep, type CallView, context } from "./admit";
import { type AttemptRecord, buildRequest, executeRequest } from "./dispatch";
import { prepareCall } from "./prepare";
import { completionOf, traceable } from "./record";
import { refuseChangedCatalog } from "./resolve";
import type { RunMeta, StoredRequest, Taint, TraceCompletion } from "./run-state";
import { shapeResult } from "./shape";
import { withTaint } from "./taint";

/**
 * A tool call inside its run's ledger: the asynchronous stages around the admission machine.
 * Before it: resolve, validate, policy, the repeat digest, the idempotency key and the exact
 * upstream request. After it: dispatch, classify, shape and what to record.
 */

export type PreparedAgentCall =
  | { kind: "refused"; envelope: Envelope }
  | {
      kind: "ready";
      run: RunMeta;
      call: AgentCall;
      tool: ToolSpec | null;
      tenant: TenantConfig;
      admit: (view: CallView) => CallStep;
    };

export async function prepareAgentCall(
  env: Env,
  run: RunMeta | null,
  input: CallInput,
): Promise<PreparedAgentCall> {
  if (!run) {
    return {
      kind: "refused",
      envelope: failure(
        { call_id: input.call_id, environment: loadConfig(env).environment },
        { code: "not_found", message: "This run does not exist or its data has expired." },
      ),
    };
  }
  const changed = refuseChangedCatalog(run.catalog_version, await catalog.version());
  if (changed) {
    return {
      kind: "refused",
      envelope: failure(
        { call_id: input.call_id, environment: run.environment, tool: input.request.tool },
        changed,
      ),
    };
  }
  const tenant = loadConfig(env).tenants[run.tenant];
  if (!tenant) throw new Error(`tenant ${run.tenant} is no longer configured`);
  const prepared = withTaint(
    prepareCall(catalog, run.namespace, input.request, { tenantId: run.tenant, tenant }),
    run.tainted_by,
    tenant.tainted_runs,
  );
  const fault = input.fault ?? null;
  // Refused before admission, like a malformed header: the orchestrator's mistake costs no budget.
  const unfit = refuseUnfitFault(fault, prepared.tool);
  if (unfit) {
    const now = Date.now();
    return {
      kind: "refused",
      envelope: failure(context(run, input.call_id, prepared.toolName, null, run.counters, now), unfit),
    };
  }
  const { tool, args } = prepared;
  // The digest and the key are both computed from the validated arguments, so whatever the agent
  // sent that validation dropped or normalised cannot make "the same call" look different to one of them.
  const digest = await callDigest(prepared.toolName ?? "", args ?? prepared.rawArgs);
  const key =
    tool && args && tool.side_effect !== "read"
      ? await deriveIdempotencyKey({
          tenant: run.tenant,
          runId: run.run_id,
          tool: tool.name,
          args,
          intent: input.intent,
        })
      : null;
  const request =
    tool && args && tool.upstream.binding !== LEDGER_BINDING
      ? buildRequest(tool, args, { key, callId: input.call_id })
      : null;
  const call: AgentCall = {
    call_id: input.call_id,
    now: Date.now(),
    prepared,
    digest,
    key,
    request,
    // Every keyed call is judged under the current policy: a held key's approval asked under another
    // one can no longer be granted, even when the new policy would not ask for a human at all.
    policy_version: key ? await policyVersion(run.catalog_version, tenant) : null,
    trace_args: tool ? applyMasks(args ?? prepared.rawArgs, tool.sensitive_args) : prepared.rawArgs,
  };
  return { kind: "ready", run, call, tool, tenant, admit: (view) => admitCall(view, call) };
}

export interface DispatchPlan {
  callId: string;
  tool: ToolSpec | null;
  key: string | null;
  /** The stored bytes to send; null for a tool the ledger serves itself. */
  request: StoredRequest | null;
  args: Record<string, unknown>;
  fault: FaultPlan | null;
  /** The approval that let this call run, if one did: the envelope names it. */
  approval: ApprovalBlock | null;
  /** The run as it is when each step needs it (a dispatch takes time; the run may change meanwhile). */
  run: () => RunMeta;
  results: ResultStore;
  scenario: ScenarioStore;
}

export interface Dispatched {
  envelope: Envelope;
  completion: TraceCompletion;
  /** Storage writes of shaping (pages, versions), committed with the call's outcome. */
  record: () => void;
  /** Set when this call brought third-party text into the run. */
  taint: Taint | null;
}

/** Stages "dispatch", "classify", "shape" and "record" for a call the machine said to send. */
export async function dispatchCall(env: Env, plan: DispatchPlan): Promise<Dispatched> {
  const { tool, key, callId } = plan;
  const ctx = (extra: Partial<EnvelopeContext> = {}) => {
    const run = plan.run();
    return context(run, callId, tool?.name ?? null, key, run.counters, Date.now(), {
      approval: plan.approval,
      ...extra,
    });
  };
  const send = async (target: ToolSpec, request: StoredRequest, fault: FaultPlan | null) =>
    executeRequest({
      tool: target,
      request,
      upstream: upstreamOf(env, plan, target, fault),
      credential: await credentialFor(env, plan.run(), target, request),
    });
  let upstreamStatus: number | null = null;
  let attempts: AttemptRecord[] = [];
  let taint: Taint | null = null;
  let record: Dispatched["record"] = () => {};
  let envelope: Envelope;
  try {
    if (!tool) throw new Error("a call without a tool was sent");
    if (plan.request === null) {
      envelope = serveResultPage(plan, tool, ctx());
    } else {
      const execution = await send(tool, plan.request, plan.fault);
      upstreamStatus = execution.status;
      attempts = execution.attempts;
      if (execution.ok) {
        const run = plan.run();
        const shaped = await shapeResult(
          {
            callId,
            fenceMarker: run.fence_marker,
            alreadyTainted: run.tainted_by !== null,
            results: plan.results,
            findTool: (name) => catalog.find(run.namespace, name),
            observe: (observer, observeArgs) =>
              send(observer, buildRequest(observer, observeArgs, { key: null, callId }), null),
          },
          tool,
          plan.args,
          execution.data,
        );
        attempts = [...attempts, ...shaped.attempts];
        record = shaped.record;
        taint = shaped.taint;
        const executed = plan.approval ? { ...plan.approval, state: "executed" as const } : null;
        envelope = shaped.failure
          ? failure(ctx({ observed_state: shaped.observed }), shaped.failure)
          : success(ctx({ observed_state: shaped.observed, approval: executed }), shaped.data);
      } else {
        envelope = failure(ctx(), execution.failure);
      }
    }
  } catch (error) {
    console.error("tool dispatch failed", tool?.name, error);
    envelope = failure(ctx(), {
      code: "internal_error",
      message:
        "The proxy failed while dispatching this call. Call again with the same arguments; it cannot happen twice.",
      side_effect_confirmed: tool?.side_effect === "read" ? false : null,
    });
  }
  const completion = completionOf(envelope, Date.now(), {
    upstream_status: upstreamStatus,
    attempts,
    replayed: false,
    result: traceable(envelope.data),
  });
  return { envelope, completion, record, taint };
}

/**
 * Credentials signed in the last moment, by run, tool and the one request each names. A dispatch
 * may reuse one only for the identical request (a read's retry, an identical call's resend) and only
 * while it still outlives the whole dispatch (its tool's timeout), which leaves the reuse window at
 * the margin: a second at most. Bounded, since one isolate can host many runs.
 */
const recentCredentials = new Map<string, { token: string; exp: number }>();
const RECENT_CREDENTIALS_MAX = 256;

/**
 * A credential for this dispatch: it names the run, the tool and the one request it may make
 * (method, target, body digest, idempotency key), and expires within the tool's timeout plus a small
 * margin and never after the run's deadline, so one captured from a log is worth that request for
 * seconds, not a run. None is signed (or reused) once the run is ended or past its deadline.
 */
async function credentialFor(env: Env, run: RunMeta, tool: ToolSpec, stored: StoredRequest): Promise<string> {
  const now = Date.now();
  if (run.state !== "open" || now >= run.deadline_at) {
    throw new Error("no credential is issued for a run that is ended or past its deadline");
  }
  const request = {
    method: stored.method,
    target: stored.target,
    body: stored.body,
    idempotency_key: stored.headers["idempotency-key"] ?? null,
  };
  const cacheKey = JSON.stringify([run.tenant, run.run_id, tool.name, request]);
  const recent = recentCredentials.get(cacheKey);
  if (recent && recent.exp - now >= tool.timeout_ms + CREDENTIAL_MARGIN_MS / 2) return recent.token;
  const exp = Math.min(credentialExpiry(now, tool.timeout_ms), Math.floor(run.deadline_at / 1_000) * 1_000);
  const token = await issueUpstreamCredential(
    { tenant: run.tenant, run: run.run_id, tool: tool.name, exp, request },
    loadConfig(env).upstreamSigningKeys,
    now,
  );
  if (recentCredentials.size >= RECENT_CREDENTIALS_MAX) recentCredentials.clear();
  recentCredentials.set(cacheKey, { token, exp });
  return token;
}

function upstreamOf(env: Env, plan: DispatchPlan, tool: ToolSpec, fault: FaultPlan | null): Upstream {
  const resolved = resolveUpstream(env, tool.upstream.binding);
  if (!resolved) throw new Error(`binding ${tool.upstream.binding} is missing`);
  // Checked per dispatch, not at run open: turning the var off stops every stored scenario too.
  return loadConfig(env).faultInjection === "sandbox-header"
    ? injectFaults(resolved, {
        scenario: plan.scenario,
        tool: tool.name,
        side_effect: tool.side_effect,
        callFault: fault,
      })
    : resolved;
}

/** read_result_page: served from this run's own storage. */
function serveResultPage(plan: DispatchPlan, tool: ToolSpec, ctx: EnvelopeContext): Envelope {
  const handle = String(plan.args.handle);
  const cursor = typeof plan.args.cursor === "number" ? plan.args.cursor : 0;
  const page = plan.results.page(handle, cursor);
  if (!page) {
    return failure(ctx, {
      code: "not_found",
      message: `No page ${cursor} of result ${handle} in this run. Use a handle this run returned and a cursor below its page count.`,
      problems: [
        {
          field: "handle",
          reason: "unknown handle or cursor",
          hint: "Handles belong to one run and expire with it.",
        },
      ],
    });
  }
  return success({ ...ctx, tool: tool.name }, page);
}
