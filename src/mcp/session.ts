import * as z from "zod";
import type { AgentPrincipal } from "../auth/agent-keys";
import { signToken, verifyToken } from "../auth/signed-token";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { ledgerFor } from "../ledger/client";
import { openRunFor } from "../runs/open-run";
import type { Envelope } from "../wire/envelope";
import type { RunOpened } from "../wire/run-open";

/**
 * One MCP session of an agent is one run. The `Mcp-Session-Id` names that run, signed so it cannot
 * be forged or pointed at another run, and is never a credential by itself: every request of the
 * session must also carry an agent key (or OAuth token) of the same tenant and agent profile.
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

/** The claims of a session id signed with one of `keys`, or null for anything else (forged, expired, a run token). */
export async function verifySessionId(
  sessionId: string,
  keys: readonly string[],
): Promise<SessionClaims | null> {
  const verified = await verifyToken(PREFIX, sessionId, keys, (value) => {
    const parsed = SessionClaimsSchema.safeParse(value);
    return parsed.success ? parsed.data : null;
  });
  return verified.ok ? verified.payload : null;
}

export type OpenedSession =
  | { ok: true; sessionId: string; claims: SessionClaims; reused: boolean; opened: RunOpened }
  | { ok: false; envelope: Envelope };

export type OpenedAgentRun =
  | { ok: true; claims: SessionClaims; reused: boolean; opened: RunOpened }
  | { ok: false; envelope: Envelope };

/**
 * Opens a run for an agent: the agent profile's namespace and limits (or, with a task key, the run
 * that key opened before), through the same service and the same run-open rate limit as
 * `POST /v1/runs`. A 2025 session's `initialize` and a 2026 client's `start_task` both come here.
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
 * `initialize` with an agent's credential: opens the agent's run and names it in a session id signed
 * with the run-token key (a distinct prefix, so neither passes for the other).
 */
export async function openSession(env: Env, agent: AgentPrincipal, taskKey?: string): Promise<OpenedSession> {
  const opened = await openAgentRun(env, agent, taskKey);
  if (!opened.ok) return opened;
  return { ...opened, sessionId: await signToken(PREFIX, opened.claims, loadConfig(env).runTokenKeys) };
}

/**
 * Every later request of a session: the id must verify and belong to the caller's tenant and profile
 * (any of the profile's keys, so a key rotation keeps sessions alive), and its run must be live. The
 * ledger decides liveness and ends a run that is past its deadline or idle as it refuses it. Another
 * agent's session id is answered exactly like a forged one, and its run is left alone.
 */
export async function resumeSession(
  env: Env,
  agent: AgentPrincipal,
  sessionId: string,
): Promise<SessionClaims | null> {
  const claims = await verifySessionId(sessionId, loadConfig(env).runTokenKeys);
  if (!claims || claims.tenant !== agent.tenant || claims.profile !== agent.profile) return null;
  const live = await ledgerFor(env, claims.tenant, claims.run).touchSession(
    claims.tenant,
    Date.now(),
    SESSION_IDLE_MS,
  );
  return live ? claims : null;
}

/** `DELETE /mcp`: the session ends, and with it its run (pending approvals expire, saying why). */
export async function endSession(env: Env, claims: SessionClaims): Promise<void> {
  await ledgerFor(env, claims.tenant, claims.run).end(claims.tenant);
}
