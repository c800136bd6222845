import * as z from "zod";
import type { AgentPrincipal } from "../auth/agent-keys";
import { signToken, verifyToken } from "../auth/signed-token";
import { loadConfig } from "../config/load";
import { newRunId } from "../core/ids";
import type { Env } from "../env";
import { ledgerFor } from "../ledger/client";
import { openRunFor, planRunOpen, TOKEN_GRACE_MS } from "../runs/open-run";
import type { Envelope } from "../wire/envelope";
import type { RunOpened } from "../wire/run-open";

/**
 * One MCP session of an agent is one run. The `Mcp-Session-Id` names that run, signed so it cannot
 * be forged or pointed at another run, and is never a credential by itself: every request of the
 * session must also carry an agent key (or OAuth token) of the same tenant and agent profile.
 *
 * The run opens when work starts: `initialize` only reserves its id (signed into the session id,
 * with the namespace and tools the session lists), and the session's first `tools/call` opens it.
 * A session that never calls (a health check, a listing) opens, spends and stores nothing. With a
 * task key the run opens at `initialize`, as the task's run may exist already.
 */

/**
 * How long a session may go unused before its run is ended. An abandoned chat must not hold a run,
 * its budget and its pending approvals open until the deadline; a client that comes back later is
 * told 404 and initializes a new session, as the MCP transport specifies.
 */
export const SESSION_IDLE_MS = 30 * 60 * 1000;

const PREFIX = "ms1";

/** What a session id names: whose session it is, and the run and namespace it serves. */
export const SessionClaimsSchema = z.strictObject({
  tenant: z.string(),
  profile: z.string(),
  run: z.string(),
  ns: z.string(),
  exp: z.number(),
  /** The tools its run was opened with, when its profile names a subset. */
  tools: z.array(z.string()).optional(),
});
export type SessionClaims = z.infer<typeof SessionClaimsSchema>;

/**
 * A session id's claims: with `open_by`, its run is reserved, not opened at `initialize`. The first
 * `tools/call` opens it, ending by `open_by` (the session's deadline, counted from `initialize`); a
 * session whose run is not open by then is over. The run's data is kept for a day after it ends,
 * and no run lives longer than a day, so a run that was opened is still known to its ledger until
 * `open_by` has passed: an ended session never opens its run again.
 */
const SessionIdClaimsSchema = SessionClaimsSchema.extend({ open_by: z.number().optional() });
export type SessionIdClaims = z.infer<typeof SessionIdClaimsSchema>;

/** The claims of a session id signed with one of `keys`, or null for anything else (forged, expired, a run token). */
export async function verifySessionId(
  sessionId: string,
  keys: readonly string[],
): Promise<SessionIdClaims | null> {
  const verified = await verifyToken(PREFIX, sessionId, keys, (value) => {
    const parsed = SessionIdClaimsSchema.safeParse(value);
    return parsed.success ? parsed.data : null;
  });
  return verified.ok ? verified.payload : null;
}

export type OpenedSession =
  | {
      ok: true;
      sessionId: string;
      claims: SessionIdClaims;
      /** Whether `initialize` opened a run (a task's), and whether that run existed before it. */
      run: "reserved" | "opened" | "reused";
    }
  | { ok: false; envelope: Envelope };

export type OpenedAgentRun =
  | { ok: true; claims: SessionClaims; reused: boolean; opened: RunOpened }
  | { ok: false; envelope: Envelope };

/**
 * Opens a run for an agent: the agent profile's namespace and limits (or, with a task key, the run
 * that key opened before), through the same service and the same run-open rate limit as
 * `POST /v1/runs`. A 2025 session's `initialize` with a task key and a 2026 client's `start_task` come here.
 */
export async function openAgentRun(
  env: Env,
  agent: AgentPrincipal,
  taskKey?: string,
): Promise<OpenedAgentRun> {
  const opened = await openRunFor(
    env,
    { kind: "agent", agent },
    taskKey === undefined ? {} : { task_key: taskKey },
  );
  if (!opened.ok) return opened;
  const claims: SessionClaims = {
    tenant: agent.tenant,
    profile: agent.profile,
    run: opened.opened.run_id,
    ns: opened.opened.namespace,
    // As long as the run's token would live: past the deadline the ledger refuses (and closes) it.
    exp: Date.parse(opened.opened.expires_at),
    ...(opened.tools === null ? {} : { tools: opened.tools }),
  };
  return { ok: true, claims, reused: opened.reused, opened: opened.opened };
}

/**
 * `initialize` with an agent's credential: names the agent's run in a session id signed with the
 * run-token key (a distinct prefix, so neither passes for the other). Without a task key the run is
 * reserved, not opened: the open is checked as it will be made (namespace, tools, limits), and a
 * refusal is answered now, but no run-open token is spent and nothing is stored. With a task key
 * the task's run opens (or is found) now.
 */
export async function openSession(env: Env, agent: AgentPrincipal, taskKey?: string): Promise<OpenedSession> {
  const keys = loadConfig(env).runTokenKeys;
  if (taskKey !== undefined) {
    const opened = await openAgentRun(env, agent, taskKey);
    if (!opened.ok) return opened;
    const sessionId = await signToken(PREFIX, opened.claims, keys);
    return { ok: true, sessionId, claims: opened.claims, run: opened.reused ? "reused" : "opened" };
  }
  const planned = planRunOpen(env, { kind: "agent", agent }, {});
  if (!planned.ok) return planned;
  const { plan } = planned;
  const deadline = Date.now() + plan.limits.deadline_s * 1000;
  const claims: SessionIdClaims = {
    tenant: agent.tenant,
    profile: agent.profile,
    run: newRunId(),
    ns: plan.namespace,
    exp: deadline + TOKEN_GRACE_MS,
    open_by: deadline,
    ...(plan.tools === null ? {} : { tools: plan.tools }),
  };
  return { ok: true, sessionId: await signToken(PREFIX, claims, keys), claims, run: "reserved" };
}

/** A session a request may continue, and whether its run is open yet. */
export interface ResumedSession {
  claims: SessionIdClaims;
  opened: boolean;
}

/**
 * Every later request of a session: the id must verify and belong to the caller's tenant and profile
 * (any of the profile's keys, so a key rotation keeps sessions alive), and its run must be live, or
 * reserved and not opened yet (then nothing is stored by asking). The ledger decides liveness and
 * ends a run that is past its deadline or idle as it refuses it. Another agent's session id is
 * answered exactly like a forged one, and its run is left alone.
 */
export async function resumeSession(
  env: Env,
  agent: AgentPrincipal,
  sessionId: string,
): Promise<ResumedSession | null> {
  const claims = await verifySessionId(sessionId, loadConfig(env).runTokenKeys);
  if (!claims || claims.tenant !== agent.tenant || claims.profile !== agent.profile) return null;
  const now = Date.now();
  const state = await ledgerFor(env, claims.tenant, claims.run).touchSession(
    claims.tenant,
    now,
    SESSION_IDLE_MS,
  );
  if (state === "live") return { claims, opened: true };
  // Not opened yet: the session goes on until its deadline, with at least a second left to open in.
  if (state === "none" && claims.open_by !== undefined && now + 1000 <= claims.open_by) {
    return { claims, opened: false };
  }
  return null;
}

/**
 * A session's first `tools/call`: opens the run its session id reserved, through the same checks
 * and run-open rate limit as any agent's run, ending by the session's deadline. Concurrent first
 * calls open one run. Null once the run is open; else the refusal, and a later call tries again.
 */
export async function openReservedRun(
  env: Env,
  agent: AgentPrincipal,
  claims: SessionIdClaims,
): Promise<Envelope | null> {
  const opened = await openRunFor(
    env,
    { kind: "agent", agent },
    // The namespace and tools the session listed, checked again against the profile as it is now.
    { namespace: claims.ns, ...(claims.tools === undefined ? {} : { tools: claims.tools }) },
    { run_id: claims.run, ends_by: claims.open_by ?? claims.exp - TOKEN_GRACE_MS },
  );
  return opened.ok ? null : opened.envelope;
}

/** `DELETE /mcp`: the session ends, and with it its run (pending approvals expire, saying why). */
export async function endSession(env: Env, claims: SessionClaims): Promise<void> {
  await ledgerFor(env, claims.tenant, claims.run).end(claims.tenant);
}
