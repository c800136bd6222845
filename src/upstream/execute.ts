import type { RunPages, ToolSpec } from "../catalog/define-tool";
import { environmentOf } from "../config/environment";
import { loadConfig } from "../config/load";
import { type TraceParent, upstreamTraceparent } from "../core/trace-context";
import type { Env } from "../env";
import { context } from "../machine/answers";
import { grantedTools, reachOf } from "../machine/grants";
import { inDoubtRuleOf, type Settled, settledAnswer, unsettledAnswer } from "../machine/in-doubt";
import { completionOf, traceable } from "../machine/record";
import { buildRequest, type Execution } from "../machine/request";
import type { ReadBack, RunMeta, StoredRequest, Taint, TraceCompletion } from "../machine/run-state";
import { type ResultKeeper, type ShapedResult, shapeResult } from "../machine/shape";
import { type FaultSource, injectFaults } from "../scenarios/inject";
import type { FaultPlan } from "../scenarios/modes";
import { catalog } from "../tools";
import {
  type ApprovalBlock,
  type Envelope,
  type EnvelopeContext,
  type FailureSpec,
  failure,
  success,
} from "../wire/envelope";
import type { AttemptRecord } from "../wire/trace-entry";
import {
  authorizationFor,
  type CredentialHolder,
  requestAuthorization,
  unsentWithoutSecret,
} from "./authorize";
import { resolveUpstream, type Upstream } from "./bindings";
import { executeRequest } from "./dispatch";
import { executeRemote } from "./dispatch-remote";
import { lostAnswerRead, withRecoveredAnswer } from "./recover";
import { readToSettle } from "./settle-read";

/** What the stages after admission keep in, and read from, the run's own storage. */
export interface RunKeeping {
  results: ResultKeeper & RunPages;
  scenario: FaultSource["scenario"];
}

/** A call the machine said to send, and what its stages need to carry it out. */
export interface ExecutionPlan {
  callId: string;
  tool: ToolSpec;
  key: string | null;
  /** The stored bytes to send; null for a tool the proxy answers itself. */
  request: StoredRequest | null;
  args: Record<string, unknown>;
  fault: FaultPlan | null;
  /** The approval that let this call run, if one did: the envelope names it. */
  approval: ApprovalBlock | null;
  /** The caller's W3C trace context; null: the call's span is in the run's own trace. */
  traceparent: TraceParent | null;
  /** The run as it is when each step needs it (a dispatch takes time; the run may change meanwhile). */
  run: () => RunMeta;
  keeping: RunKeeping;
  /**
   * Set for a resend to an upstream that ignores keys: the settling read goes first, and only an
   * effect it shows absent is sent again; the time its key was first recorded bounds what it finds.
   */
  settleFirstSince?: number;
}

interface Executed {
  envelope: Envelope;
  completion: TraceCompletion;
  /** Storage writes of shaping (pages, versions), committed with the call's outcome. */
  record: () => void;
  /** Set when this call brought third-party text into the run. */
  taint: Taint | null;
}

/**
 * A sent call's stages, in order: dispatch (sending, classifying each answer, validating the
 * output; a write's success lost on the way is read back by its key, `recover.ts`), then shape a
 * success, then record what the trace keeps. A built-in tool is answered
 * from the run's own pages instead of an upstream. Whatever fails here becomes the call's envelope.
 */
export async function executeCall(env: Env, plan: ExecutionPlan): Promise<Executed> {
  const { tool } = plan;
  // Filled in as the upstream answers, so a failure after it still leaves the attempts in the trace.
  const seen: Seen = { status: null, attempts: [] };
  let outcome: { envelope: Envelope; shaped: ShapedResult | null };
  try {
    outcome = await carryOut(env, plan, seen);
  } catch (error) {
    console.error("tool dispatch failed", tool.name, error);
    const envelope = failure(contextOf(plan), {
      code: "internal_error",
      message:
        "The proxy failed while dispatching this call. Call again with the same arguments; it cannot happen twice.",
      side_effect_confirmed: tool.side_effect === "read" ? false : null,
    });
    outcome = { envelope, shaped: null };
  }
  const { envelope, shaped } = outcome;
  const completion = completionOf(envelope, Date.now(), {
    upstream_status: seen.status,
    attempts: seen.attempts,
    replayed: false,
    result: traceable(envelope.data),
    read_back: postconditionOf(shaped) ?? seen.readBack ?? null,
  });
  return { envelope, completion, record: shaped?.record ?? (() => {}), taint: shaped?.taint ?? null };
}

interface Seen {
  status: number | null;
  attempts: AttemptRecord[];
  /** What a settling read concluded, when one was sent. */
  readBack?: ReadBack;
}

/** What a postcondition's read concluded of a claimed success, when one was read. */
function postconditionOf(shaped: ShapedResult | null): ReadBack | null {
  const post = shaped?.observed?.postcondition as { verified?: boolean | null } | undefined;
  if (!post) return null;
  const verdict =
    post.verified === true
      ? "held"
      : post.verified === false
        ? (shaped?.failure?.code ?? "refuted")
        : "unread";
  return { kind: "postcondition", verdict };
}

function settleReadBack(verdict: { kind: string } | null): ReadBack {
  return { kind: "settle", verdict: verdict?.kind ?? "unread" };
}

async function carryOut(
  env: Env,
  plan: ExecutionPlan,
  seen: Seen,
): Promise<{ envelope: Envelope; shaped: ShapedResult | null }> {
  const { tool, callId } = plan;
  const builtin = tool.builtin;
  if (builtin) {
    const run = plan.run();
    const granted = grantedTools(
      catalog,
      reachOf(run),
      loadConfig(env).tenants[run.tenant]?.namespaces ?? [],
    );
    const answer = builtin(plan.args, plan.keeping.results, granted);
    const ctx = contextOf(plan);
    const envelope = answer.ok ? success(ctx, answer.data) : failure(ctx, answer.failure);
    return { envelope, shaped: null };
  }
  if (plan.request === null) throw new Error(`${tool.name} goes upstream but was sent without a request`);
  // Every upstream request of the call (attempts, the postcondition's read) is a child of its span.
  const traceparent = upstreamTraceparent(plan.run().run_id, callId, plan.traceparent);
  const send = async (target: ToolSpec, request: StoredRequest, fault: FaultPlan | null) => {
    const unsent = unsentWithoutSecret(env, target);
    if (unsent) return unsent;
    const remote = target.upstream?.remote;
    if (remote) {
      return executeRemote({
        tool: target,
        remote,
        request,
        tenant: plan.run().tenant,
        upstream: upstreamOf(env, plan, target, null, false),
        faulted: upstreamOf(env, plan, target, fault),
        sign: async (message) =>
          authorizationFor(env, holderOf(plan.run()), target, remote.server.audience, message),
        deadlineAt: plan.run().deadline_at,
        traceparent,
      });
    }
    return executeRequest({
      tool: target,
      request,
      upstream: upstreamOf(env, plan, target, fault),
      // Signed for each attempt: a read's retries each get a credential of one attempt's lifetime.
      credential: async () => requestAuthorization(env, holderOf(plan.run()), target, request),
      traceparent,
      deadlineAt: plan.run().deadline_at,
    });
  };
  const settling = {
    callId,
    findTool: (name: string) => catalog.find(tool.namespace, name),
    send: (target: ToolSpec, request: StoredRequest) => send(target, request, null),
  };
  const checks: AttemptRecord[] = [];
  if (plan.settleFirstSince !== undefined) {
    // A resend to an upstream that ignores keys: only an effect a read shows absent is sent again.
    const check = await readToSettle(tool, plan.args, plan.settleFirstSince, settling);
    checks.push(...check.attempts);
    seen.attempts = checks;
    seen.readBack = settleReadBack(check.verdict);
    if (check.verdict?.kind !== "absent")
      return settledEnvelope(plan, settledAnswer(tool, check.verdict, null));
  }
  let execution: Execution = await send(tool, plan.request, plan.fault);
  const lost = plan.key === null ? null : lostAnswerRead(tool, plan.key, callId, execution);
  if (lost) execution = withRecoveredAnswer(execution, await send(lost.tool, lost.request, null));
  seen.status = execution.status;
  seen.attempts = [...checks, ...execution.attempts];
  if (!execution.ok) {
    const rule =
      plan.key !== null && inDoubt(tool, execution.failure) ? inDoubtRuleOf(tool) : "resend_under_key";
    if (rule === "reconcile") {
      return { envelope: failure(contextOf(plan), unsettledAnswer(tool, execution.failure)), shaped: null };
    }
    if (rule === "settle_by_read") {
      // Settled now, before the model is told anything: found, absent, or for a human.
      const since = plan.settleFirstSince ?? execution.attempts[0]?.started_at ?? Date.now();
      const check = await readToSettle(tool, plan.args, since, settling);
      seen.attempts = [...seen.attempts, ...check.attempts];
      seen.readBack = settleReadBack(check.verdict);
      return settledEnvelope(plan, settledAnswer(tool, check.verdict, execution.failure));
    }
    return { envelope: failure(contextOf(plan), execution.failure), shaped: null };
  }
  const run = plan.run();
  const shaped = await shapeResult(
    {
      callId,
      fenceMarker: run.fence_marker,
      alreadyTainted: run.tainted_by !== null,
      results: plan.keeping.results,
      // A postcondition reads with a tool of the tool's own namespace (a catalog rule).
      findTool: (name) => catalog.find(tool.namespace, name),
      observe: (observer, observeArgs) =>
        send(observer, buildRequest(observer, observeArgs, { key: null, callId }), null),
    },
    tool,
    plan.args,
    execution.data,
  );
  seen.attempts = [...seen.attempts, ...shaped.attempts];
  const executed = plan.approval ? { ...plan.approval, state: "executed" as const } : null;
  const envelope = shaped.failure
    ? failure(contextOf(plan, { observed_state: shaped.observed }), shaped.failure)
    : success(contextOf(plan, { observed_state: shaped.observed, approval: executed }), shaped.data);
  return { envelope, shaped };
}

/** A write's failure whose effect is unknown: what an upstream that ignores keys cannot be resent. */
function inDoubt(tool: ToolSpec, failed: FailureSpec): boolean {
  // A remote server's dispatch already answers a doubt it will not resend (`details.resend`).
  const answered = failed.details != null && "resend" in failed.details;
  return tool.side_effect !== "read" && failed.side_effect_confirmed === null && !answered;
}

/** A settling read's conclusion as the call's envelope: done (the effect's id), or its failure. */
function settledEnvelope(plan: ExecutionPlan, settled: Settled): { envelope: Envelope; shaped: null } {
  if (settled.kind === "failure")
    return { envelope: failure(contextOf(plan), settled.failure), shaped: null };
  const executed = plan.approval ? { ...plan.approval, state: "executed" as const } : null;
  const ctx = contextOf(plan, { observed_state: settled.observed, approval: executed });
  return { envelope: success(ctx, { effect_id: settled.effect_id }), shaped: null };
}

function contextOf(plan: ExecutionPlan, extra: Partial<EnvelopeContext> = {}): EnvelopeContext {
  const run = plan.run();
  return context(run, plan.callId, plan.tool.name, plan.key, run.counters, Date.now(), {
    approval: plan.approval,
    ...extra,
  });
}

/**
 * Whom a dispatch's credentials speak for: the run, never past its deadline. None is signed (or
 * reused) once the run is ended or past its deadline.
 */
function holderOf(run: RunMeta): CredentialHolder {
  if (run.state !== "open" || Date.now() >= run.deadline_at) {
    throw new Error("no credential is issued for a run that is ended or past its deadline");
  }
  const user = run.user ? { sub: run.user.sub, iss: run.user.iss } : null;
  return { tenant: run.tenant, run: run.run_id, notAfter: run.deadline_at, user };
}

function upstreamOf(
  env: Env,
  plan: ExecutionPlan,
  tool: ToolSpec,
  fault: FaultPlan | null,
  faultable = true,
): Upstream {
  const resolved = tool.upstream ? resolveUpstream(env, tool.upstream, environmentOf(env)) : null;
  if (!resolved) throw new Error(`binding ${tool.upstream?.binding ?? "(none: a built-in tool)"} is missing`);
  // Checked per dispatch, not at run open: turning the var off stops every stored scenario too.
  return faultable && loadConfig(env).faultInjection === "sandbox-header"
    ? injectFaults(resolved, {
        scenario: plan.keeping.scenario,
        tool: tool.name,
        side_effect: tool.side_effect,
        callFault: fault,
      })
    : resolved;
}
