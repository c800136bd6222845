import { waitUntil } from "cloudflare:workers";
import type { ApprovalSummary } from "../approvals/model";
import { loadConfig } from "../config/load";
import { tenantObject } from "../config/placement";
import type { Env } from "../env";
import { catalog } from "../tools";
import type { ApprovalState, Envelope } from "../wire/envelope";
import { writeToAnalyticsEngine } from "./analytics-engine-sink";
import {
  type Counts,
  countApprovalChange,
  countApprovalOverdue,
  countCall,
  countHighRisk,
  type HighRiskFacts,
  type MetricEvent,
  UNKNOWN_TOOL,
} from "./events";
import { bufferForStore, type Defer } from "./store-sink";

/** Where a call came from: the tenant and the namespace its verified run token names. */
export interface CallOrigin {
  tenant: string;
  namespace: string;
}

/** An approval as the tenant's directory holds it, with the tenant the directory belongs to. */
export type ApprovalChange = ApprovalSummary & {
  tenant: string;
  /** When a human decided; without it the wait ends now. */
  decided_at?: string | null;
};

/**
 * Counts one answered tool call for the agents' health. Never throws and never waits: the event
 * goes to Analytics Engine (fire and forget) or to this isolate's batch for the tenant's
 * MetricsStore, flushed after the answer.
 */
export function recordCall(env: Env, origin: CallOrigin, envelope: Envelope): void {
  // A run's tools may come from several namespaces (a subset, use_tool): any catalog tool is named;
  // the call counts under the run's namespace.
  const known = envelope.tool !== null && namespaceOfTool(envelope.tool) !== UNKNOWN_TOOL;
  const tool = known && envelope.tool !== null ? envelope.tool : UNKNOWN_TOOL;
  emit(env, {
    tenant: origin.tenant,
    namespace: origin.namespace,
    tool,
    kind: "call",
    label: envelope.error?.code ?? "success",
    at: Date.now(),
    counts: countCall(envelope),
  });
}

/**
 * Counts an approval's change of state: asked (first seen), approved (or executed), rejected,
 * expired, and for a human decision the wait from `created_at` to `decided_at` (or now). Call it
 * wherever an approval's state is written, with the state it had before (null for a new one);
 * writing the same state again counts nothing.
 *
 * @example
 * recordApprovalChange(env, previous?.state ?? null, { ...summary, tenant }, ctx);
 */
export function recordApprovalChange(
  env: Env,
  previous: ApprovalState | null,
  summary: ApprovalChange,
  ctx?: { waitUntil: Defer },
): void {
  const now = Date.now();
  const decidedAt = summary.decided_at ? Date.parse(summary.decided_at) : now;
  const counts = countApprovalChange(previous, summary.state, decidedAt - Date.parse(summary.created_at));
  if (!counts) return;
  emitApprovalEvent(env, summary, summary.state, counts, ctx);
}

/**
 * Counts one high-risk call as the run's ledger decided it (`countHighRisk`): the whole of the four
 * high-risk rates, and what the door cannot see (a stored key's bytes, the policy's approval).
 */
export function recordHighRisk(
  env: Env,
  origin: CallOrigin,
  tool: string,
  facts: HighRiskFacts,
  ctx: { waitUntil: Defer },
): void {
  const counts = countHighRisk(facts);
  if (!counts) return;
  emit(
    env,
    {
      tenant: origin.tenant,
      namespace: origin.namespace,
      tool,
      kind: "call",
      label: "success",
      at: Date.now(),
      counts,
    },
    (work) => ctx.waitUntil(work),
  );
}

/** Counts an approval that went past its SLA undecided: once, when its escalation is first seen. */
export function recordApprovalOverdue(
  env: Env,
  summary: Pick<ApprovalChange, "tenant" | "tool">,
  ctx?: { waitUntil: Defer },
): void {
  emitApprovalEvent(env, summary, "pending", countApprovalOverdue(), ctx);
}

function emitApprovalEvent(
  env: Env,
  summary: Pick<ApprovalChange, "tenant" | "tool">,
  label: ApprovalState,
  counts: Counts,
  ctx?: { waitUntil: Defer },
): void {
  emit(
    env,
    {
      tenant: summary.tenant,
      namespace: namespaceOfTool(summary.tool),
      tool: summary.tool,
      kind: "approval",
      label,
      at: Date.now(),
      counts,
    },
    ctx ? (work) => ctx.waitUntil(work) : undefined,
  );
}

/** Each catalog tool's namespace, found once per isolate: every answered call names its tool. */
const namespaceByTool = new Map<string, string>();

/**
 * The namespace an approval's tool belongs to. Approvals are asked for writes and destructive
 * calls, which only their own namespace defines; the first namespace that has the tool wins.
 */
function namespaceOfTool(tool: string): string {
  let namespace = namespaceByTool.get(tool);
  if (namespace === undefined) {
    namespace = catalog.namespaces().find((candidate) => catalog.find(candidate, tool)) ?? UNKNOWN_TOOL;
    // The catalog is fixed for the isolate's life; names outside it are not kept (agents' typos are unbounded).
    if (namespace !== UNKNOWN_TOOL) namespaceByTool.set(tool, namespace);
  }
  return namespace;
}

/** The sink is the binding the environment has: Analytics Engine in production, the store elsewhere. */
function emit(env: Env, event: MetricEvent, defer: Defer = deferAfterAnswer): void {
  try {
    if (env.METRICS) writeToAnalyticsEngine(env.METRICS, event);
    // The store also judges alerts: beside Analytics Engine it counts only tenants that set some.
    if (env.METRICS_STORE && (!env.METRICS || hasAlerts(env, event.tenant))) {
      const store = env.METRICS_STORE;
      bufferForStore((tenant) => tenantObject(env, store, tenant, tenant), event, defer);
    }
  } catch (error) {
    // Health metrics must never cost an agent its answer.
    console.error("metrics event dropped", error);
  }
}

function hasAlerts(env: Env, tenant: string): boolean {
  return Object.keys(loadConfig(env).tenants[tenant]?.alerts ?? {}).length > 0;
}

/**
 * The current request's `waitUntil`, from the runtime: every door (REST, MCP, the OAuth provider
 * around them) reaches the one call entry without an ExecutionContext in its arguments.
 */
function deferAfterAnswer(work: Promise<unknown>): void {
  waitUntil(work);
}
