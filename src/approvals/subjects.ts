/**
 * Subjects: the ids an operator searches history by ("what happened to order A1002?"). A call's
 * subjects are its top-level string arguments whose key ends in `_id` (order_id, customer_id,
 * ticket_id, draft_id...), each kept as `key=value`. The approvals and runs of the tenant's directory
 * are indexed by them, and `subject=` searches match them: a bare value matches that value under any
 * key, `key=value` matches that key only.
 */

/** Longer values are not ids; they are left out rather than cut, so a search never half-matches. */
export const MAX_SUBJECT_VALUE_CHARS = 128;
/** A run keeps this many subjects at most: enough for any real task, bounded for a looping agent. */
export const MAX_SUBJECTS_PER_RUN = 100;

const SUBJECT_KEY = /^[A-Za-z][A-Za-z0-9_]*_id$/;

/** A parsed `subject=` search. */
export interface SubjectQuery {
  /** The argument name to match, or null for any. */
  key: string | null;
  value: string;
}

/**
 * The subjects of a call's arguments, sorted and without duplicates. Keys in `skip` (the tool's
 * sensitive arguments) are never indexed, so a masked value cannot leak through a search index.
 *
 * @example
 * subjectsOf({ order_id: "A1002", amount_cents: 100 }) // ["order_id=A1002"]
 */
export function subjectsOf(args: unknown, skip: Readonly<Record<string, unknown>> = {}): string[] {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return [];
  const subjects = new Set<string>();
  for (const [key, value] of Object.entries(args)) {
    if (!SUBJECT_KEY.test(key) || Object.hasOwn(skip, key) || typeof value !== "string") continue;
    if (value === "" || value.length > MAX_SUBJECT_VALUE_CHARS) continue;
    subjects.add(`${key}=${value}`);
  }
  return [...subjects].sort();
}

/**
 * Reads a search: `order_id=A1002` names a key, anything else (`A1002`) is a value under any key.
 *
 * @example
 * parseSubjectQuery("order_id=A1002") // { key: "order_id", value: "A1002" }
 * parseSubjectQuery("A1002") // { key: null, value: "A1002" }
 */
export function parseSubjectQuery(text: string): SubjectQuery {
  const trimmed = text.trim();
  const separator = trimmed.indexOf("=");
  const key = separator > 0 ? trimmed.slice(0, separator) : "";
  if (SUBJECT_KEY.test(key)) return { key, value: trimmed.slice(separator + 1) };
  return { key: null, value: trimmed };
}

/** The union of two subject (or tool) lists, sorted, at most `max` long. */
export function mergeSorted(
  a: readonly string[],
  b: readonly string[],
  max = MAX_SUBJECTS_PER_RUN,
): string[] {
  return [...new Set([...a, ...b])].sort().slice(0, max);
}
