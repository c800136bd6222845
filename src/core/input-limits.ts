/**
 * Limits on everything a caller controls, checked at the edge before any parsing that could be made
 * to work hard: a hostile header is refused before it is hashed or verified, a hostile body before
 * zod, the ledger or canonical JSON recurse through it. Body size (64 KiB, 413) is hono's bodyLimit
 * on each route; these are the rest. The catalog refuses a tool whose input they would make
 * impossible to send (catalog.ts). They are generous for any real tool call: a tool's own schema
 * is what tells an agent its arguments are too long, these only stop payloads no tool accepts.
 *
 * Refusals (machine/limit.ts, http/limits.ts) happen before the run's ledger, like a 413: they
 * spend no budget and are not traced. The rate limit, checked before them, bounds how often a
 * caller can send one.
 */
export const INPUT_LIMITS = {
  /** A run token is about 250 bytes; a tenant key far less. */
  authorization_bytes: 1_024,
  /** An orchestrator's intent nonce, hashed into idempotency keys. */
  intent_bytes: 256,
  /** All header names and values together. */
  header_bytes: 16 * 1_024,
  /** Objects and arrays nested in a body, the body itself being level 1. */
  depth: 10,
  string_chars: 10_000,
  array_items: 100,
  object_keys: 50,
  key_chars: 128,
  /** OpenAI's limit on function names, so no tool an agent can be offered has a longer name. */
  tool_name_chars: 64,
} as const;

/**
 * The level a tool's arguments sit at in the deepest body that carries them, for `depth`:
 * `use_tool`'s call `{"args": {"name": ..., "arguments": {...}}}` puts them at 3 (a direct call's
 * `{"args": {...}}`, REST or MCP, at 2). An object or array of the arguments at level k of their own
 * (the arguments being 0) is nested `ARGUMENTS_LEVEL + k` deep.
 */
export const ARGUMENTS_LEVEL = 3;
