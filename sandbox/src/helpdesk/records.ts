import { newId, nowIso } from "../ids";
import { searchByWords } from "../search";
import type { Caller } from "../store";
import type {
  AddTicketNote,
  Article,
  Conversation,
  ConversationMessage,
  HelpdeskEffect,
  Note,
  PurgeConversation,
  PurgedConversation,
  TicketNotes,
  ToolRefusal,
} from "./model";

/**
 * The helpdesk's reads and writes, one tenant at a time. A write records one effect row in the
 * same transaction as its change, so the effect count is exactly the number of changes applied.
 */

export type Written<T> = { ok: true; result: T } | { ok: false; refusal: ToolRefusal };

const SNIPPET_CHARS = 160;

export function searchArticles(
  sql: SqlStorage,
  tenant: string,
  query: string,
  limit: number,
): { results: Array<{ article_id: string; title: string; snippet: string }>; total: number } {
  const articles = sql
    .exec<Article & Record<string, SqlStorageValue>>(
      "SELECT article_id, title, body, updated_at FROM hd_articles WHERE tenant = ?",
      tenant,
    )
    .toArray();
  const found = searchByWords(
    articles,
    query,
    (a) => `${a.title} ${a.body}`,
    (a) => a.article_id,
  );
  return {
    results: found.slice(0, limit).map((a) => ({
      article_id: a.article_id,
      title: a.title,
      snippet: a.body.length > SNIPPET_CHARS ? `${a.body.slice(0, SNIPPET_CHARS)}…` : a.body,
    })),
    total: found.length,
  };
}

function ticketOf(sql: SqlStorage, tenant: string, ticketId: string) {
  return sql
    .exec<{ subject: string; status: string }>(
      "SELECT subject, status FROM hd_tickets WHERE tenant = ? AND ticket_id = ?",
      tenant,
      ticketId,
    )
    .toArray()[0];
}

export function ticketNotes(sql: SqlStorage, tenant: string, ticketId: string): TicketNotes | null {
  const ticket = ticketOf(sql, tenant, ticketId);
  if (!ticket) return null;
  const notes = sql
    .exec<Note & Record<string, SqlStorageValue>>(
      `SELECT note_id, ticket_id, body, created_at FROM hd_notes WHERE tenant = ? AND ticket_id = ?
        ORDER BY created_at, rowid`,
      tenant,
      ticketId,
    )
    .toArray()
    .map((n) => ({ note_id: n.note_id, ticket_id: n.ticket_id, body: n.body, created_at: n.created_at }));
  return { ticket_id: ticketId, ...ticket, notes };
}

function recordEffect(sql: SqlStorage, caller: Caller, target: string, key: string | null): void {
  sql.exec(
    "INSERT INTO hd_effects (at, tenant, run_id, tool, target, idempotency_key) VALUES (?, ?, ?, ?, ?, ?)",
    nowIso(),
    caller.tenant,
    caller.run_id,
    caller.tool,
    target,
    key,
  );
}

function notFound(what: string, id: string): Written<never> {
  return { ok: false, refusal: { code: "not_found", message: `No ${what} with id '${id}'.` } };
}

export function addNote(
  sql: SqlStorage,
  caller: Caller,
  input: AddTicketNote,
  key: string | null,
): Written<Note> {
  if (!ticketOf(sql, caller.tenant, input.ticket_id)) return notFound("ticket", input.ticket_id);
  const note = { note_id: newId("nt"), ticket_id: input.ticket_id, body: input.body, created_at: nowIso() };
  sql.exec(
    `INSERT INTO hd_notes (note_id, tenant, ticket_id, body, created_at, run_id, idempotency_key)
      VALUES (?, ?, ?, ?, ?, ?, ?)`,
    note.note_id,
    caller.tenant,
    note.ticket_id,
    note.body,
    note.created_at,
    caller.run_id,
    key,
  );
  recordEffect(sql, caller, input.ticket_id, key);
  return { ok: true, result: note };
}

interface ConversationRow extends Record<string, SqlStorageValue> {
  conversation_id: string;
  ticket_id: string;
  status: string;
  messages: string;
  purged_at: string | null;
}

export function readConversation(
  sql: SqlStorage,
  tenant: string,
  conversationId: string,
): Conversation | null {
  const row = sql
    .exec<ConversationRow>(
      `SELECT conversation_id, ticket_id, status, messages, purged_at FROM hd_conversations
        WHERE tenant = ? AND conversation_id = ?`,
      tenant,
      conversationId,
    )
    .toArray()[0];
  if (!row) return null;
  return {
    conversation_id: row.conversation_id,
    ticket_id: row.ticket_id,
    status: row.status === "purged" ? "purged" : "open",
    messages: JSON.parse(row.messages) as ConversationMessage[],
    purged_at: row.purged_at,
  };
}

/** Closes the conversation and deletes its messages: nothing of what was said can be read again. */
export function purge(
  sql: SqlStorage,
  caller: Caller,
  input: PurgeConversation,
  key: string | null,
): Written<PurgedConversation> {
  const conversation = readConversation(sql, caller.tenant, input.conversation_id);
  if (!conversation) return notFound("conversation", input.conversation_id);
  if (conversation.status === "purged") {
    return {
      ok: false,
      refusal: {
        code: "conversation_purged",
        message: `Conversation ${input.conversation_id} was already purged at ${conversation.purged_at}.`,
      },
    };
  }
  const purgedAt = nowIso();
  sql.exec(
    `UPDATE hd_conversations SET status = 'purged', messages = '[]', purged_at = ?
      WHERE tenant = ? AND conversation_id = ?`,
    purgedAt,
    caller.tenant,
    input.conversation_id,
  );
  recordEffect(sql, caller, input.conversation_id, key);
  return {
    ok: true,
    result: {
      conversation_id: input.conversation_id,
      status: "purged",
      purged_messages: conversation.messages.length,
      purged_at: purgedAt,
    },
  };
}

export function listEffects(
  sql: SqlStorage,
  filter: { tenant: string | null; tool: string | null },
): HelpdeskEffect[] {
  return sql
    .exec<HelpdeskEffect & Record<string, SqlStorageValue>>(
      `SELECT seq, at, tenant, run_id, tool, target, idempotency_key FROM hd_effects
        WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR tool = ?2) ORDER BY seq`,
      filter.tenant,
      filter.tool,
    )
    .toArray()
    .map((e) => ({ ...e }));
}

/** Notes as the admin API lists them, with who wrote them and under which key. */
export function listNotes(
  sql: SqlStorage,
  filter: { tenant: string | null; idempotency_key: string | null },
): Array<Note & { tenant: string; run_id: string | null; idempotency_key: string | null }> {
  return sql
    .exec<Note & { tenant: string; run_id: string | null; idempotency_key: string | null }>(
      `SELECT note_id, tenant, ticket_id, body, created_at, run_id, idempotency_key FROM hd_notes
        WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR idempotency_key = ?2) ORDER BY created_at, rowid`,
      filter.tenant,
      filter.idempotency_key,
    )
    .toArray()
    .map((n) => ({ ...n }));
}
