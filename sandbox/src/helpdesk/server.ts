import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import type { Caller, SandboxStore } from "../store";
import type { DriftChange } from "./drift";
import { resolveKey } from "./keyed";
import {
  AddTicketNoteInput,
  ConversationInput,
  PurgeConversationInput,
  SearchArticlesInput,
  TicketNotesInput,
  type ToolRefusal,
  type WriteOutcome,
} from "./model";
import { HELPDESK_TOOL_NAMES, type HelpdeskToolName, publishedDefinition } from "./tools";

/**
 * The helpdesk as an MCP server, built fresh for each HTTP request of one tenant: nothing lives in
 * it between requests, so drift shows on the next `tools/list` and any isolate serves any request;
 * a 2025 session is also told of it (`notifications/tools/list_changed`) on its next tool call.
 */

export interface HelpdeskContext {
  store: DurableObjectStub<SandboxStore>;
  caller: Caller;
  /** The HTTP `Idempotency-Key` header, a write's key when its `_meta` names none. */
  idempotencyHeader: string | undefined;
  drifts: Map<string, Set<DriftChange>>;
  /** A 2025 session's server: it says when its tools change (`tools.listChanged`). */
  legacy: boolean;
  /** Tell this request's client, before its tool's answer, that the tools changed since it listed them. */
  announce: boolean;
}

/** `_meta` of a result replayed from an idempotency key rather than applied again. */
const REPLAYED_META_KEY = "io.edge-tool-proxy/idempotent-replayed";

/** How long a client may reuse a `tools/list` (2026-07-28 revision); drift shows after at most this. */
export const TOOLS_LIST_TTL_MS = 60_000;

type Handler = (
  args: unknown,
  meta: Record<string, unknown> | undefined,
  ctx: HelpdeskContext,
) => Promise<CallToolResult>;

const HANDLERS: Record<HelpdeskToolName, Handler> = {
  search_articles: async (args, _, { store, caller }) => {
    const input = SearchArticlesInput.parse(args);
    return success(await store.searchArticles(caller.tenant, input.query, input.limit));
  },
  get_ticket_notes: async (args, _, { store, caller }) => {
    const { ticket_id } = TicketNotesInput.parse(args);
    const notes = await store.getTicketNotes(caller.tenant, ticket_id);
    return notes
      ? success(notes)
      : refusal({ code: "not_found", message: `No ticket with id '${ticket_id}'.` });
  },
  add_ticket_note: async (args, meta, ctx) => {
    const input = AddTicketNoteInput.parse(args);
    const key = await resolveKey(meta, ctx.idempotencyHeader, "add_ticket_note", args);
    if (!key.ok) return refusal(key.refusal);
    const note = { ticket_id: input.ticket_id, body: input.body };
    return written(await ctx.store.addTicketNote({ ...ctx.caller, tool: "add_ticket_note" }, note, key.key));
  },
  get_conversation: async (args, _, { store, caller }) => {
    const { conversation_id } = ConversationInput.parse(args);
    const conversation = await store.getConversation(caller.tenant, conversation_id);
    return conversation
      ? success(conversation)
      : refusal({ code: "not_found", message: `No conversation with id '${conversation_id}'.` });
  },
  purge_conversation: async (args, meta, ctx) => {
    const input = PurgeConversationInput.parse(args);
    const key = await resolveKey(meta, ctx.idempotencyHeader, "purge_conversation", args);
    if (!key.ok) return refusal(key.refusal);
    const purge = { conversation_id: input.conversation_id, reason: input.reason };
    return written(
      await ctx.store.purgeConversation({ ...ctx.caller, tool: "purge_conversation" }, purge, key.key),
    );
  },
};

export function createHelpdeskServer(ctx: HelpdeskContext): McpServer {
  const server = new McpServer(
    { name: "sandbox-helpdesk", title: "Sandbox helpdesk", version: "1.0.0" },
    {
      // A 2025 session is told of a change on its next tool call's stream; a 2026-07-28 client
      // relists by the listing's ttlMs.
      capabilities: { tools: { listChanged: ctx.legacy } },
      cacheHints: { "tools/list": { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: "private" } },
    },
  );
  for (const name of HELPDESK_TOOL_NAMES) {
    const definition = publishedDefinition(name, ctx.drifts.get(name));
    if (!definition) continue;
    const handler = HANDLERS[name];
    server.registerTool(name, definition, async (args: unknown, extra) => {
      if (ctx.announce) await extra.mcpReq.notify({ method: "notifications/tools/list_changed" });
      return handler(args, extra.mcpReq._meta, ctx);
    });
  }
  return server;
}

function success(structured: object, replayed = false): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(structured) }],
    structuredContent: structured as Record<string, unknown>,
    ...(replayed ? { _meta: { [REPLAYED_META_KEY]: true } } : {}),
  };
}

function refusal(error: ToolRefusal): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify({ error }) }], isError: true };
}

function written<T extends object>(outcome: WriteOutcome<T>): CallToolResult {
  switch (outcome.kind) {
    case "applied":
      return success(outcome.result);
    case "replayed":
      return success(outcome.result, true);
    case "refused":
      return refusal(outcome.refusal);
  }
}
