import type { AgentPrincipal } from "../auth/agent-keys";
import { issueRunToken, type PendingOpenClaims } from "../auth/run-token";
import { resolveSubset } from "../catalog/subset";
import { loadConfig } from "../config/load";
import { resolveRunLimits } from "../config/tenants";
import { newRunId, taskRunId } from "../core/ids";
import type { Env } from "../env";
import { requestContext } from "../http/respond";
import { ledgerFor } from "../ledger/client";
import type { OpenRunAnswer, PendingOpen } from "../ledger/ledger-api";
import { RETENTION_MS } from "../ledger/run-ledger";
import { grantedTools } from "../machine/grants";
import { newRun } from "../machine/run-state";
import { runStatus } from "../machine/run-status";
import { admitRunOpen } from "../ratelimit/admission";
import { acceptScenario } from "../scenarios/accept";
import type { ScenarioStep } from "../scenarios/scenario";
import { toolSpecsFor } from "../specs/tool-specs";
import { catalog } from "../tools";
import { type Envelope, type EnvironmentName, failure, type Problem, success } from "../wire/envelope";
import type { RunOpened } from "../wire/run-open";
import type { RunLimits } from "../wire/run-status";
import type { RunUser } from "../wire/run-user";
import type { ScenarioStepInput } from "../wire/scenario";
import { toolsSeenBy } from "../workflow/run-tools";

/** Run tokens outlive the deadline a little, so an agent can still read its status and trace. */
export const TOKEN_GRACE_MS = 60 * 60 * 1000;

/** Who opens a run: an orchestrator with the tenant key, or an agent with an agent key (or OAuth grant). */
export type RunOpener = { kind: "tenant"; tenant: string } | { kind: "agent"; agent: AgentPrincipal };

export interface OpenRunRequest {
  namespace?: string | undefined;
  limits?: Partial<RunLimits> | undefined;
  scenario?: ScenarioStepInput[] | undefined;
  /** The orchestrator's id of the task: every open with it answers the one run it opened. */
  task_key?: string | undefined;
  /** Open with only these tools (names or `namespace.tool`); absent: the namespace's tools. */
  tools?: string[] | undefined;
}

export type OpenRunResult =
  | {
      ok: true;
      envelope: Envelope;
      opened: RunOpened;
      reused: boolean;
      /** The subset it was opened with, as refs; null: its whole namespace. */
      tools: string[] | null;
      /** The open its run's credential carries when it stored nothing (see `pending-open.ts`). */
      pending: PendingOpenClaims | null;
    }
  | { ok: false; envelope: Envelope };

/**
 * Where a run an MCP session reserved at its start is opened: under the id its session id names,
 * ending no later than the session's deadline (epoch ms), so the run never outlives its session.
 */
export interface ReservedRun {
  run_id: string;
  ends_by: number;
}

/** An open checked and resolved, before anything is spent or stored. */
export interface PlannedOpen {
  tenant: string;
  namespace: string;
  limits: RunLimits;
  repeat_threshold: number;
  scenario: ScenarioStep[];
  /** The subset it opens with, as refs (asked for, or its namespace's default set); null: its whole namespace. */
  tools: string[] | null;
  /** The subset as asked for (of the open or the agent's profile), as refs; null: none was. */
  asked_tools: string[] | null;
  reach: string[];
}

export type PlanResult = { ok: true; plan: PlannedOpen } | { ok: false; envelope: Envelope };

/**
 * Checks an open and resolves what it would open (namespace, subset, limits, scenario) without
 * spending a run-open token or storing anything: what `openRunFor` opens, and what an MCP session's
 * `initialize` names before its first call opens the run.
 */
export function planRunOpen(env: Env, opener: RunOpener, request: OpenRunRequest): PlanResult {
  const config = loadConfig(env);
  const tenantId = opener.kind === "tenant" ? opener.tenant : opener.agent.tenant;
  const tenant = config.tenants[tenantId];
  const ctx = requestContext(env);
  const refuse = (envelope: Envelope): PlanResult => ({ ok: false, envelope });
  const subset = tenant ? openedSubset(opener, tenant.namespaces, request.tools) : null;
  if (subset && !subset.ok) {
    return refuse(
      failure(ctx, {
        code: "validation_error",
        message: `The tools asked for are not all granted to this ${opener.kind === "agent" ? "agent profile" : "tenant"}: ${subset.problems.map((problem) => `${problem.field} (${problem.reason})`).join("; ")}. Nothing was opened.`,
        problems: subset.problems,
      }),
    );
  }
  const asked = subset?.refs ?? null;
  const namespace =
    request.namespace ?? (opener.kind === "agent" ? opener.agent.namespace : asked?.[0]?.split(".")[0]);
  if (namespace === undefined) {
    return refuse(
      failure(ctx, {
        code: "validation_error",
        message: "Name the namespace the run may use.",
        problems: [{ field: "namespace", reason: "missing required field", hint: "Such as support." }],
      }),
    );
  }
  const allowed = opener.kind === "agent" ? [opener.agent.namespace] : (tenant?.namespaces ?? []);
  if (!tenant || !allowed.includes(namespace) || !catalog.hasNamespace(namespace)) {
    return refuse(
      failure(ctx, {
        code: "not_found",
        message: `Namespace "${namespace}" is not available to this ${opener.kind === "agent" ? "agent key" : "tenant"}.`,
        details: { namespaces: allowed.filter((ns) => catalog.hasNamespace(ns)) },
      }),
    );
  }
  // An agent's profile is its ceiling: it may ask for less than the profile gives, never more.
  const profile = opener.kind === "agent" ? opener.agent.limits : {};
  const ceilings = { ...tenant.ceilings };
  for (const [field, value] of Object.entries(profile) as [keyof RunLimits, number][]) {
    ceilings[field] = Math.min(ceilings[field], value);
  }
  const limits = resolveRunLimits({ ...profile, ...request.limits }, ceilings);
  if (!limits.ok) {
    const whose = opener.kind === "agent" ? "agent profile's limit" : "tenant's ceiling";
    return refuse(
      failure(ctx, {
        code: "validation_error",
        message: `limits.${limits.field} asks for ${limits.asked}, above this ${whose}.`,
        problems: [
          {
            field: `limits.${limits.field}`,
            reason: `${limits.asked} is above the ${whose}`,
            hint: `At most ${limits.ceiling}.`,
          },
        ],
      }),
    );
  }
  const scenario = acceptScenario(
    request.scenario,
    config.faultInjection,
    new Map(catalog.tools(namespace).map((tool) => [tool.name, tool.side_effect])),
  );
  if (!scenario.ok) {
    return refuse(
      failure(ctx, { code: "validation_error", message: scenario.message, problems: scenario.problems }),
    );
  }
  return {
    ok: true,
    plan: {
      tenant: tenantId,
      namespace,
      limits: limits.limits,
      repeat_threshold: tenant.repeat_threshold,
      scenario: scenario.value,
      tools: asked ?? defaultRefs(namespace),
      asked_tools: asked,
      reach: subset?.reach ?? [namespace],
    },
  };
}

/**
 * Opens a run, for `POST /v1/runs` and for an MCP session alike (at `initialize` with a task key,
 * else at its first `tools/call`, under the run id its session reserved), under the tenant's limit
 * on opening runs (checked once the request is valid, and not for a run that exists). A tenant key
 * may open a run in any of the tenant's namespaces with limits under its ceilings; an agent key
 * only in its profile's namespace, with the profile's limits (a request may ask for less, never more).
 * `user` is whom the run acts for, verified from its opener's assertion (`user-assertion.ts`): never
 * a field of the request, so no body and no model can name one.
 */
export async function openRunFor(
  env: Env,
  opener: RunOpener,
  request: OpenRunRequest,
  reserved?: ReservedRun,
  user: RunUser | null = null,
): Promise<OpenRunResult> {
  const planned = planRunOpen(env, opener, request);
  if (!planned.ok) return planned;
  const { plan } = planned;
  const config = loadConfig(env);
  const ctx = requestContext(env);
  const refuse = (envelope: Envelope): OpenRunResult => ({ ok: false, envelope });
  const tenantId = plan.tenant;
  const namespace = plan.namespace;
  const refs = plan.tools;
  const limits = reserved === undefined ? plan.limits : endingBy(plan.limits, reserved.ends_by);
  const runId =
    reserved?.run_id ??
    (request.task_key === undefined ? newRunId() : await taskRunId(tenantId, request.task_key));
  const ledger = ledgerFor(env, tenantId, runId);
  // A task's run (or a session's reserved run) that exists is answered again without a run-open
  // token: a retry opens nothing, so the limit on opening runs never refuses it. Only a new run
  // spends one. Opens racing past this check may each spend one; the ledger still opens one run.
  const reusable = request.task_key !== undefined || reserved !== undefined;
  const exists = reusable && (await ledger.status(tenantId)) !== null;
  if (!exists) {
    const limited = await admitRunOpen(env, tenantId);
    // Refused while a concurrent open of the same run got through: that run is the answer.
    if (limited && !(reusable && (await ledger.status(tenantId)) !== null))
      return refuse(failure(ctx, limited));
  }
  const input = {
    tenant: tenantId,
    run_id: runId,
    namespace,
    limits,
    repeat_threshold: plan.repeat_threshold,
    tools: refs,
    reach: plan.reach,
    ...(user === null ? {} : { user }),
    profile: opener.kind === "agent" ? opener.agent.profile : null,
  };
  // An open with nothing to keep before the run's first request (no task to answer again, no
  // session's reserved id, no scenario) stores nothing: its token carries the open (pending-open.ts).
  const pending =
    !reusable && plan.scenario.length === 0 ? await pendingOpen(input, config.environment) : null;
  const answer =
    pending?.answer ??
    (await ledger.open({
      ...input,
      scenario: plan.scenario,
      ...(reserved === undefined ? {} : { reserved: true }),
      ...(request.task_key === undefined
        ? {}
        : {
            task: {
              key: request.task_key,
              // As asked, so a retry of the same body matches whatever the ceilings became since.
              request: {
                namespace,
                limits: request.limits ?? null,
                scenario: request.scenario ?? null,
                ...(plan.asked_tools === null ? {} : { tools: plan.asked_tools }),
                // Another user's open of the same task is another task: a conflict, not this run.
                ...(user === null ? {} : { user: { iss: user.iss, sub: user.sub } }),
              },
            },
          }),
    }));
  if (answer.kind === "conflict") {
    return refuse(
      failure(ctx, {
        code: "conflict_error",
        message: `Task key "${request.task_key}" already opened a run with other ${answer.fields.join(", ")}. Reuse a task key only to retry the same open; a new task needs a new key.`,
        problems: answer.fields.map((field) => ({
          field,
          reason: "differs from the open this task key was first used with",
          hint: "Send the same body as the first open, or a new task_key.",
        })),
        details: { task_key: request.task_key, differing_fields: answer.fields },
      }),
    );
  }
  if (answer.kind === "retired") {
    const deleted = new Date(answer.deleted_at).toISOString();
    const named = request.task_key === undefined ? "This open" : `Task key "${request.task_key}"`;
    return refuse(
      failure(ctx, {
        code: "conflict_error",
        message: `${named} names run ${answer.run_id}, which ended and whose records were deleted at ${deleted}, when its retention passed. A task key names one run: open the task again under a new task_key.`,
        problems: [
          {
            field: "task_key",
            reason: "its run's records were deleted when its retention passed",
            hint: "Send a new task_key for a new run of this task.",
          },
        ],
        details: { task_key: request.task_key ?? null, run_id: answer.run_id, deleted_at: deleted },
      }),
    );
  }
  const { status } = answer;
  const expiresAt = Date.parse(status.deadline_at) + TOKEN_GRACE_MS;
  const token = await issueRunToken(
    {
      tenant: tenantId,
      run: runId,
      ns: namespace,
      exp: expiresAt,
      ...(refs === null ? {} : { tools: refs }),
      ...(pending === null ? {} : { open: pending.claim }),
    },
    config.runTokenKeys,
  );
  const { run_id, ...rest } = status;
  const opened: RunOpened = {
    run_id,
    run_token: token,
    expires_at: new Date(expiresAt).toISOString(),
    retained_until: new Date(Date.parse(status.deadline_at) + RETENTION_MS).toISOString(),
    ...rest,
    ...(request.scenario === undefined ? {} : { scenario: plan.scenario }),
    ...(request.task_key === undefined
      ? {}
      : { task_key: request.task_key, reused: answer.kind === "reused" }),
    tools: await toolSpecsFor({ namespace, tools: refs, reach: plan.reach }),
  };
  return {
    ok: true,
    envelope: success(ctx, opened),
    opened,
    reused: answer.kind === "reused",
    tools: refs,
    pending: pending?.claim ?? null,
  };
}

/**
 * An open that stores nothing: the status it answers, as the run's ledger would have answered it,
 * and what its token carries for the ledger to create the run from on its first request.
 */
async function pendingOpen(
  input: Omit<PendingOpen, "opened_at" | "catalog_version" | "tools_seen"> & { tenant: string },
  environment: EnvironmentName,
): Promise<{ answer: OpenRunAnswer; claim: PendingOpenClaims }> {
  const now = Date.now();
  const catalogVersion = await catalog.version();
  // Its tools are pinned when the ledger creates it (`shownTools`), from the catalog it carries.
  const run = newRun(input, environment, { catalog_version: catalogVersion, tool_versions: {} }, now);
  return {
    answer: { kind: "opened", status: runStatus(run, now) },
    claim: {
      at: now,
      limits: input.limits,
      repeat_threshold: input.repeat_threshold,
      catalog_version: catalogVersion,
      tools_seen: await toolsSeenBy(input),
      reach: input.reach,
      ...(input.user ? { user: input.user } : {}),
      ...(input.profile ? { profile: input.profile } : {}),
    },
  };
}

/** The limits, with the deadline moved in so the run ends no later than `endsBy` (at least 1 s from now). */
function endingBy(limits: RunLimits, endsBy: number): RunLimits {
  const left = Math.max(1, Math.floor((endsBy - Date.now()) / 1000));
  return { ...limits, deadline_s: Math.min(limits.deadline_s, left) };
}

/**
 * The subset a run opens with, checked against what the opener is granted: a tenant key its
 * tenant's namespaces; an agent key its profile's namespace and the namespaces of its profile's
 * tools. The answer names the refs (null: no subset, the whole namespace) and the run's reach.
 */
function openedSubset(
  opener: RunOpener,
  tenantNamespaces: readonly string[],
  asked: string[] | undefined,
): { ok: true; refs: string[] | null; reach: string[] } | { ok: false; problems: Problem[] } {
  let reach = [...tenantNamespaces];
  if (opener.kind === "agent") {
    const profileTools = opener.agent.tools ?? [];
    const ofProfile = resolveSubset(
      grantedTools(catalog, tenantNamespaces, tenantNamespaces),
      profileTools,
      `agent_profiles.${opener.agent.profile}.tools`,
    );
    if (!ofProfile.ok) return ofProfile;
    const namespaces = ofProfile.refs.map((ref) => ref.split(".")[0] ?? "");
    reach = [...new Set([opener.agent.namespace, ...namespaces])];
  }
  const wanted = asked ?? (opener.kind === "agent" ? opener.agent.tools : undefined);
  if (wanted === undefined) return { ok: true, refs: null, reach };
  const resolved = resolveSubset(grantedTools(catalog, reach, tenantNamespaces), wanted, "tools");
  return resolved.ok ? { ok: true, refs: resolved.refs, reach } : resolved;
}

/**
 * The refs an agent's runs open with (null: its profile's whole namespace), as its 2026-07-28 MCP
 * listing shows them before any run is open; the same rule opening a run applies.
 */
export function agentToolRefs(env: Env, agent: AgentPrincipal): string[] | null {
  const tenant = loadConfig(env).tenants[agent.tenant];
  const subset = openedSubset({ kind: "agent", agent }, tenant?.namespaces ?? [], undefined);
  if (!subset.ok) return null;
  return subset.refs ?? defaultRefs(agent.namespace);
}

/**
 * What a run of `namespace` opened without a subset lists: its default set as refs, or null (its
 * whole namespace) when it declares none. A namespace of more tools than a run lists at once
 * declares one (src/catalog/default-tools.ts); the run finds the rest with `find_tools`.
 */
function defaultRefs(namespace: string): string[] | null {
  return catalog.listedByDefault(namespace)?.map((name) => `${namespace}.${name}`) ?? null;
}
