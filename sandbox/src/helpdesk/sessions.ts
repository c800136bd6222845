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
  sql.exec(
    "DELETE FROM hd_session_views WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR session_id = ?2)",
    tenant,
    sessionId,
  );
  return sql.exec(
    "DELETE FROM hd_sessions WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR session_id = ?2)",
    tenant,
    sessionId,
  ).rowsWritten;
}

/**
 * Records that a session was shown the tools as published now (`drift`, a fingerprint of the
 * tenant's drift): at `initialize` and at each `tools/list`.
 */
export function markToolsSeen(sql: SqlStorage, tenant: string, sessionId: string, drift: string): void {
  sql.exec(
    `INSERT INTO hd_session_views (session_id, tenant, drift) VALUES (?, ?, ?)
      ON CONFLICT (session_id) DO UPDATE SET drift = excluded.drift`,
    sessionId,
    tenant,
    drift,
  );
}

/**
 * Whether the tools changed since the session was last shown them: then it is told
 * (`notifications/tools/list_changed`) once, and counts as shown them from then on.
 */
export function takeToolsNews(sql: SqlStorage, tenant: string, sessionId: string, drift: string): boolean {
  const seen = sql
    .exec<{ drift: string }>(
      "SELECT drift FROM hd_session_views WHERE session_id = ? AND tenant = ?",
      sessionId,
      tenant,
    )
    .toArray()[0]?.drift;
  if (seen === drift) return false;
  markToolsSeen(sql, tenant, sessionId, drift);
  return true;
}
