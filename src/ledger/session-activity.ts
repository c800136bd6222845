import type { RunMeta } from "../pipeline/run-state";

/**
 * When the run's MCP session last made a request (epoch ms), in the object's key-value storage: a
 * session's bookkeeping, not part of the run's state the admission machine reasons about.
 */
export const SESSION_ACTIVITY_KEY = "mcp_session_last_active_at";

/**
 * Records an MCP session's request and says whether the session may go on: not once the run is
 * past its deadline or the session has been idle longer than `idleMs` (the ledger then ends the run,
 * so an abandoned session holds nothing open).
 */
export function recordSessionActivity(kv: SyncKvStorage, run: RunMeta, now: number, idleMs: number): boolean {
  const lastActive = kv.get<number>(SESSION_ACTIVITY_KEY) ?? run.created_at;
  if (now >= run.deadline_at || now - lastActive > idleMs) return false;
  kv.put(SESSION_ACTIVITY_KEY, now);
  return true;
}
