// Whether a field, a parameter or a header is a credential, by its name or its description: the
// importer keeps such a thing out of a tool's input (the upstream's credential carries it, from a
// secret), and `check` refuses an input field that looks like one unless the tool says why it is
// not. Names are read as words (snake_case, camelCase, kebab-case), so `monkey`, `keyword` and
// `order_id` are no keys, and a word that measures or pages (`token_count`, `page_token`,
// `idempotency_key`) turns a secret word into an ordinary one.

/** Words that name a secret by themselves, as one word of a name. */
const SECRET_WORDS = new Set([
  "key",
  "apikey",
  "token",
  "accesstoken",
  "authtoken",
  "secret",
  "clientsecret",
  "password",
  "passwd",
  "passphrase",
  "pwd",
  "signature",
  "sig",
  "auth",
  "authorization",
  "credential",
  "credentials",
  "session",
  "sessionid",
  "bearer",
  "jwt",
  "cookie",
  "hmac",
  "otp",
  "privatekey",
]);

/**
 * Words that make a name with a secret word name something else: a count or a limit of tokens, a
 * page or a sync cursor, a key that identifies a record or a request, a public key, the kind of
 * credential rather than the credential.
 */
const ORDINARY_WORDS = new Set([
  "count",
  "counts",
  "limit",
  "max",
  "min",
  "length",
  "usage",
  "used",
  "type",
  "kind",
  "format",
  "mode",
  "method",
  "scheme",
  "expiry",
  "expires",
  "expiration",
  "ttl",
  "url",
  "uri",
  "endpoint",
  "page",
  "next",
  "prev",
  "previous",
  "continuation",
  "pagination",
  "cursor",
  "sync",
  "idempotency",
  "sort",
  "partition",
  "cache",
  "primary",
  "foreign",
  "public",
  "required",
  "enabled",
]);

/** A last word that names a record of the secret (`key_id`, `token_name`), not the secret; a session's id is one. */
const REFERENCE_WORDS = new Set(["id", "ids", "name", "names", "label", "prefix", "hint"]);

/** Phrases of a description that say a value is a secret; a lone "key" or "token" says too little there. */
const SECRET_DESCRIPTION =
  /\b(?:secret|password|passphrase|credentials?|api[\s_-]?key|access[\s_-]?token|auth(?:entication|orization)?[\s_-]?(?:token|key|header)|bearer[\s_-]?token|private[\s_-]?key|session[\s_-]?(?:id|token|cookie)|signing[\s_-]?key)\b/i;

/** `X-API-Key` → [x, api, key]; `nextPageToken` → [next, page, token]; `order_id` → [order, id]. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.toLowerCase());
}

/** Whether a name, read as words, names a secret. */
export function isCredentialName(name: string): boolean {
  const words = nameWords(name);
  const secret = words.findIndex((word) => SECRET_WORDS.has(word));
  if (secret === -1) return false;
  if (words.some((word) => ORDINARY_WORDS.has(word))) return false;
  const last = words.at(-1) ?? "";
  const session = words.some((word) => word === "session" || word === "sessionid");
  return !(REFERENCE_WORDS.has(last) && secret < words.length - 1 && !session);
}

/** Whether a name or a description marks a value as a credential. */
export function looksLikeCredential(name: string, description?: unknown): boolean {
  return isCredentialName(name) || (typeof description === "string" && SECRET_DESCRIPTION.test(description));
}
