import { SEED_HELPDESK } from "./seed";

/**
 * The helpdesk's tables in the sandbox's SQLite store. Like every business table they carry a
 * `tenant` column that every query filters on. Effects, sessions and drift are the helpdesk's
 * test controls: what a write applied, which MCP sessions the server remembers (and the tools each
 * was last shown), and which tool definitions an admin changed.
 */
export const HELPDESK_TABLES = [
  `CREATE TABLE IF NOT EXISTS hd_articles (
    tenant TEXT NOT NULL, article_id TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL,
    updated_at TEXT NOT NULL, PRIMARY KEY (tenant, article_id))`,
  `CREATE TABLE IF NOT EXISTS hd_tickets (
    tenant TEXT NOT NULL, ticket_id TEXT NOT NULL, subject TEXT NOT NULL, status TEXT NOT NULL,
    PRIMARY KEY (tenant, ticket_id))`,
  `CREATE TABLE IF NOT EXISTS hd_notes (
    note_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, ticket_id TEXT NOT NULL, body TEXT NOT NULL,
    created_at TEXT NOT NULL, run_id TEXT, idempotency_key TEXT)`,
  "CREATE INDEX IF NOT EXISTS hd_notes_by_ticket ON hd_notes (tenant, ticket_id, created_at)",
  `CREATE TABLE IF NOT EXISTS hd_conversations (
    tenant TEXT NOT NULL, conversation_id TEXT NOT NULL, ticket_id TEXT NOT NULL, status TEXT NOT NULL,
    messages TEXT NOT NULL, purged_at TEXT, PRIMARY KEY (tenant, conversation_id))`,
  `CREATE TABLE IF NOT EXISTS hd_effects (
    seq INTEGER PRIMARY KEY, at TEXT NOT NULL, tenant TEXT NOT NULL, run_id TEXT NOT NULL,
    tool TEXT NOT NULL, target TEXT NOT NULL, idempotency_key TEXT)`,
  `CREATE TABLE IF NOT EXISTS hd_sessions (
    session_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, opened_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS hd_session_views (
    session_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, drift TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS hd_drift (
    tenant TEXT NOT NULL, tool TEXT NOT NULL, change TEXT NOT NULL, PRIMARY KEY (tenant, tool, change))`,
];

export const HELPDESK_RESETTABLE = [
  "hd_articles",
  "hd_tickets",
  "hd_notes",
  "hd_conversations",
  "hd_effects",
  "hd_sessions",
  "hd_session_views",
  "hd_drift",
];

export function seedHelpdesk(sql: SqlStorage): void {
  for (const { tenant, articles, tickets, notes, conversations } of SEED_HELPDESK) {
    for (const a of articles) {
      sql.exec(
        "INSERT INTO hd_articles (tenant, article_id, title, body, updated_at) VALUES (?, ?, ?, ?, ?)",
        tenant,
        a.article_id,
        a.title,
        a.body,
        a.updated_at,
      );
    }
    for (const t of tickets) {
      sql.exec(
        "INSERT INTO hd_tickets (tenant, ticket_id, subject, status) VALUES (?, ?, ?, ?)",
        tenant,
        t.ticket_id,
        t.subject,
        t.status,
      );
    }
    notes.forEach((n, i) => {
      sql.exec(
        "INSERT INTO hd_notes (note_id, tenant, ticket_id, body, created_at) VALUES (?, ?, ?, ?, ?)",
        `nt_seed_${tenant}_${i + 1}`,
        tenant,
        n.ticket_id,
        n.body,
        n.created_at,
      );
    });
    for (const c of conversations) {
      sql.exec(
        `INSERT INTO hd_conversations (tenant, conversation_id, ticket_id, status, messages, purged_at)
          VALUES (?, ?, ?, 'open', ?, NULL)`,
        tenant,
        c.conversation_id,
        c.ticket_id,
        JSON.stringify(c.messages),
      );
    }
  }
}
