import { nowIso } from "../ids";

/**
 * Sessions of the 2025 revisions of MCP: `initialize` opens one and names it in `Mcp-Session-Id`;
 * every later request must carry an id the server still remembers for the same tenant. Forgetting
 * a session (the client's `DELETE /mcp`, or the admin API, as a server restart would) makes its id
 * answer 404, which tells a client to initialize again.
 */

export function openSession(sql: SqlStorage, tenant: string): string {
  const sessionId = crypto.randomUUID();
  sql.exec(
    "INSERT INTO hd_sessions (session_id, tenant, opened_at) VALUES (?, ?, ?)",
    sessionId,
    tenant,
    nowIso(),
  );
  return sessionId;
}

/** Another tenant's session id is unknown to this tenant, exactly like one never issued. */
export function isSessionKnown(sql: SqlStorage, tenant: string, sessionId: string): boolean {
  return (
    sql.exec("SELECT 1 FROM hd_sessions WHERE session_id = ? AND tenant = ?", sessionId, tenant).toArray()
      .length > 0
  );
}

/** Forgets one session (`sessionId`) or every session of a tenant (or of all tenants); returns how many. */
export function forgetSessions(sql: SqlStorage, tenant: string | null, sessionId: string | null): number {
  return sql.exec(
    "DELETE FROM hd_sessions WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR session_id = ?2)",
    tenant,
    sessionId,
  ).rowsWritten;
}
