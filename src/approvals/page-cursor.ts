/**
 * Keyset paging for the operator's lists, newest first. A page ends at its last row, and the next
 * page starts strictly after that row's `(created_at, id)`, so rows written while an operator pages
 * never shift or repeat what the following pages show. The cursor is opaque to callers.
 */

export interface PageCursor {
  /** ISO 8601, as the directory stores it. */
  created_at: string;
  id: string;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
const ROW_ID = /^[A-Za-z0-9_-]{1,128}$/;

function toBase64Url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

function fromBase64Url(text: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(text)) return null;
  try {
    const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
}

/** The cursor of the page after the row `last`. */
export function encodeCursor(last: PageCursor): string {
  return toBase64Url(JSON.stringify([last.created_at, last.id]));
}

/** The row a cursor points after; null for anything this module did not write. */
export function decodeCursor(cursor: string): PageCursor | null {
  const text = fromBase64Url(cursor);
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return null;
  const [createdAt, id] = parsed as unknown[];
  if (typeof createdAt !== "string" || !ISO_INSTANT.test(createdAt)) return null;
  if (typeof id !== "string" || !ROW_ID.test(id)) return null;
  return { created_at: createdAt, id };
}

/**
 * Cuts a page from rows read one past the limit: the extra row only says there is a next page,
 * whose cursor is the page's last row.
 */
export function cutPage<T>(
  rows: readonly T[],
  limit: number,
  keyOf: (row: T) => PageCursor,
): { rows: T[]; next_cursor: string | null } {
  if (rows.length <= limit) return { rows: [...rows], next_cursor: null };
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, next_cursor: last === undefined ? null : encodeCursor(keyOf(last)) };
}
