import * as z from "zod";
import type { AgentPrincipal } from "../auth/agent-keys";
import { PendingOpenClaimsSchema } from "../auth/run-token";
import { signToken, verifyToken } from "../auth/signed-token";
import { loadConfig } from "../config/load";
import { newRunId } from "../core/ids";
import { type HeaderReader, handleSessionToolCall } from "../door/entry";
import type { Env } from "../env";
import { ledgerFor } from "../ledger/client";
import type { CallRequest } from "../machine/prepare";
import { openRunFor, planRunOpen, TOKEN_GRACE_MS } from "../runs/open-run";
import type { Envelope } from "../wire/envelope";
import type { RunOpened } from "../wire/run-open";
import { type RunUser, runUserSchema } from "../wire/run-user";

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
  /** The open that stored nothing, which the run's first request creates it from (`runs/pending-open.ts`). */
  open: PendingOpenClaimsSchema.optional(),
});
export type SessionClaims = z.infer<typeof SessionClaimsSchema>;

/**
 * A session id's claims: with `open_by`, its run is reserved, not opened at `initialize`. The first
 * `tools/call` opens it, ending by `open_by` (the session's deadline, counted from `initialize`); a
 * session whose run is not open by then is over. The run's data is kept for a day after it ends,
 * and no run lives longer than a day, so a run that was opened is still known to its ledger until
 * `open_by` has passed: an ended session never opens its run again.
 */
const SessionIdClaimsSchema = SessionClaimsSchema.extend({
  open_by: z.number().optional(),
  /** Whom the reserved run will act for: the user `initialize`'s assertion named, verified then. */
  user: runUserSchema().optional(),
});
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
  taskKey: string | undefined,
  /** Whom the run acts for, verified from the opener's `X-User-Assertion` (runs/user-assertion.ts). */
  user: RunUser | null,
): Promise<OpenedAgentRun> {
  const opened = await openRunFor(
    env,
    { kind: "agent", agent },
    taskKey === undefined ? {} : { task_key: taskKey },
    undefined,
    user,
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
    ...(opened.pending === null ? {} : { open: opened.pending }),
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
export async function openSession(
  env: Env,
  agent: AgentPrincipal,
  taskKey: string | undefined,
  user: RunUser | null,
): Promise<OpenedSession> {
  const keys = loadConfig(env).runTokenKeys;
  if (taskKey !== undefined) {
    const opened = await openAgentRun(env, agent, taskKey, user);
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
    ...(user === null ? {} : { user }),
  };
  return { ok: true, sessionId: await signToken(PREFIX, claims, keys), claims, run: "reserved" };
}

/** A session a request may continue, and whether its run is open yet. */
export interface ResumedSession {
  claims: SessionIdClaims;
  opened: boolean;
}

/**
 * The claims of a session id the caller may use: it must verify and belong to the caller's tenant
 * and profile (any of the profile's keys, so a key rotation keeps sessions alive). Another agent's
 * session id is answered exactly like a forged one. Whether its run is live is the ledger's to say.
 */
export async function sessionOf(
  env: Env,
  agent: AgentPrincipal,
  sessionId: string,
): Promise<SessionIdClaims | null> {
  const claims = await verifySessionId(sessionId, loadConfig(env).runTokenKeys);
  return claims && claims.tenant === agent.tenant && claims.profile === agent.profile ? claims : null;
}

/** A reserved run may still be opened: the session goes on until its deadline, with at least a second left to open in. */
function mayOpen(claims: SessionIdClaims, now: number): boolean {
  return claims.open_by !== undefined && now + 1000 <= claims.open_by;
}

/**
 * Every later request of a session but a lone `tools/call`: the session id must be the caller's
 * (`sessionOf`) and its run live, or reserved and not opened yet (then nothing is stored by asking).
 * The ledger decides liveness and ends a run that is past its deadline or idle as it refuses it; a
 * session that is not the caller's leaves its run alone.
 */
export async function resumeSession(
  env: Env,
  agent: AgentPrincipal,
  sessionId: string,
): Promise<ResumedSession | null> {
  const claims = await sessionOf(env, agent, sessionId);
  if (!claims) return null;
  const now = Date.now();
  const state = await ledgerFor(env, claims.tenant, claims.run).touchSession(
    claims.tenant,
    now,
    SESSION_IDLE_MS,
  );
  if (state === "live") return { claims, opened: true };
  if (state === "none" && mayOpen(claims, now)) return { claims, opened: false };
  return null;
}

/**
 * A session's `tools/call`, in one request to its run's ledger: the ledger checks that the session
 * is live (ending a run past its deadline or idle, as `resumeSession` does) as it admits the call.
 * A reserved run not opened yet is opened here (`openReservedRun`), and the call made again; a
 * refused open is the call's answer. "over": the session is not live, and nothing was called.
 */
export async function callInSession(
  env: Env,
  agent: AgentPrincipal,
  claims: SessionIdClaims,
  request: CallRequest,
  header: HeaderReader,
): Promise<Envelope | "over"> {
  const caller = { tenant: claims.tenant, run: claims.run, namespace: claims.ns };
  const answer = await handleSessionToolCall(env, caller, request, header, SESSION_IDLE_MS);
  if (answer === "ended" || (answer === "none" && !mayOpen(claims, Date.now()))) return "over";
  if (answer !== "none") return answer;
  const refused = await openReservedRun(env, agent, claims);
  if (refused) return refused;
  const again = await handleSessionToolCall(env, caller, request, header, SESSION_IDLE_MS);
  return typeof again === "string" ? "over" : again;
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
    claims.user ?? null,
  );
  return opened.ok ? null : opened.envelope;
}

/** `DELETE /mcp`: the session ends, and with it its run (pending approvals expire, saying why). */
export async function endSession(env: Env, claims: SessionClaims): Promise<void> {
  await ledgerFor(env, claims.tenant, claims.run).end(claims.tenant);
}
