import * as z from "zod";

/**
 * The helpdesk's records and its tools' inputs and outputs. The schemas are what `tools/list`
 * publishes (`inputSchema`, `outputSchema`) and what every call is checked against; the types come
 * from them.
 */

export interface Article {
  article_id: string;
  title: string;
  /** Untrusted: community answers are mixed in unreviewed. */
  body: string;
  updated_at: string;
}

export interface ConversationMessage {
  author: "customer" | "agent";
  at: string;
  text: string;
}

export const SearchArticlesInput = z.object({
  query: z.string().min(1).max(200).describe("Words to look for in article titles and bodies."),
  limit: z.number().int().min(1).max(10).default(5).describe("At most this many results (default 5)."),
});

export const ArticleHitSchema = z.object({
  article_id: z.string(),
  title: z.string(),
  snippet: z.string().describe("The start of the article's body (untrusted text)."),
});

export const SearchArticlesOutput = z.object({
  results: z.array(ArticleHitSchema),
  total: z.number().int().describe("How many articles matched, before the limit."),
});

export const TicketNotesInput = z.object({
  ticket_id: z.string().min(1).max(64).describe("The ticket, e.g. HD-1001."),
});

export const NoteSchema = z.object({
  note_id: z.string(),
  ticket_id: z.string(),
  body: z.string(),
  created_at: z.string(),
});
export type Note = z.infer<typeof NoteSchema>;

export const TicketNotesOutput = z.object({
  ticket_id: z.string(),
  subject: z.string(),
  status: z.string(),
  notes: z.array(NoteSchema).describe("Oldest first."),
});
export type TicketNotes = z.infer<typeof TicketNotesOutput>;

export const AddTicketNoteInput = z.object({
  ticket_id: z.string().min(1).max(64).describe("The ticket, e.g. HD-1001."),
  body: z.string().min(1).max(2000).describe("The note, visible to agents only."),
});
export type AddTicketNote = z.infer<typeof AddTicketNoteInput>;

export const ConversationInput = z.object({
  conversation_id: z.string().min(1).max(64).describe("The conversation, e.g. CV-1001."),
});

export const ConversationStatusSchema = z.enum(["open", "purged"]);

export const ConversationOutput = z.object({
  conversation_id: z.string(),
  ticket_id: z.string(),
  status: ConversationStatusSchema,
  messages: z.array(z.object({ author: z.enum(["customer", "agent"]), at: z.string(), text: z.string() })),
  purged_at: z.string().nullable(),
});
export type Conversation = z.infer<typeof ConversationOutput>;

export const PurgeConversationInput = z.object({
  conversation_id: z.string().min(1).max(64).describe("The conversation, e.g. CV-1001."),
  reason: z.string().min(1).max(500).describe("Why it is purged (kept in the audit trail)."),
});
export type PurgeConversation = z.infer<typeof PurgeConversationInput>;

export const PurgeConversationOutput = z.object({
  conversation_id: z.string(),
  status: z.literal("purged"),
  purged_messages: z.number().int(),
  purged_at: z.string(),
});
export type PurgedConversation = z.infer<typeof PurgeConversationOutput>;

/** A refusal a tool answers as its result (`isError: true`), for the model to read. */
export interface ToolRefusal {
  code: string;
  message: string;
}

/** A write's outcome in the store: its result, the one stored under its key, or a refusal. */
export type WriteOutcome<T> =
  | { kind: "applied"; result: T }
  | { kind: "replayed"; result: T }
  | { kind: "refused"; refusal: ToolRefusal };

/** One application of a write, as the effect counter lists it. */
export interface HelpdeskEffect {
  seq: number;
  at: string;
  tenant: string;
  run_id: string;
  tool: string;
  target: string;
  idempotency_key: string | null;
}
