import type { RunMeta } from "../machine/run-state";

/**
 * When the run's MCP session last made a request (epoch ms), in the object's key-value storage: a
 * session's bookkeeping, not part of the run's state the admission machine reasons about.
 */
export const SESSION_ACTIVITY_KEY = "mcp_session_last_active_at";

/**
 * How stale the stored activity may get: a request less than this after the stored time stores
 * nothing, so a busy session costs a write a minute, not one per request.
 */
export const SESSION_STAMP_INTERVAL_MS = 60_000;

/**
 * Records an MCP session's request and says whether the session may go on: not once the run is
 * past its deadline or the session has been idle longer than `idleMs` (the ledger then ends the run,
 * so an abandoned session holds nothing open). The last request may have come up to
 * `SESSION_STAMP_INTERVAL_MS` after the stored time, so the idle limit is counted from the stored
 * time plus that interval: a session is never ended before `idleMs` have passed since its last
 * request, and at most a minute after.
 */
export function recordSessionActivity(kv: SyncKvStorage, run: RunMeta, now: number, idleMs: number): boolean {
  const stored = kv.get<number>(SESSION_ACTIVITY_KEY) ?? run.created_at;
  if (now >= run.deadline_at || now - stored > idleMs + SESSION_STAMP_INTERVAL_MS) return false;
  if (now - stored >= SESSION_STAMP_INTERVAL_MS) kv.put(SESSION_ACTIVITY_KEY, now);
  return true;
}
