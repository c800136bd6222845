/**
 * Size caps. A result over its tool's limit is never cut into a broken JSON blob: the model gets a
 * summary (size, counts, first items) and a handle, and the whole result is kept in pages it can
 * read one at a time. Lists are paged by items; anything else by slices of its JSON text.
 *
 * Linear in the result's size: the result is serialized once to measure it, a list's items are
 * serialized once each to cut pages, and the stored pages are joined from those same texts. Nothing
 * is serialized again to be measured.
 */

export const PAGE_BYTES = 16 * 1024;
const FIRST_ITEMS = 5;
const FIRST_ITEMS_BYTES = 2 * 1024;
const SKELETON_BYTES = 4 * 1024;

/** UTF-8 length of a string without encoding it: surrogate pairs are 4 bytes, lone ones 3 (U+FFFD). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        index++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** Bytes of a value's JSON: for tests and one-off checks; the capping below never calls it. */
export const byteLength = (value: unknown) => utf8Length(JSON.stringify(value) ?? "null");

export interface ResultSummary {
  total_bytes: number;
  /** Where the paged list sits in the result ("" for a top-level list), or null when text pages. */
  list_path: string | null;
  total_items: number | null;
  first_items: unknown[];
  pages: number;
}

/**
 * An item whose JSON is larger than this gets no page of its own: it is cut into text pieces, so
 * every stored page stays far below the storage's limit on one row (about 2 MB), whatever the item.
 */
export const MAX_WHOLE_ITEM_BYTES = 64 * 1024;

/**
 * One stored page: a slice of the list, a slice of the JSON text, or a slice of the JSON text of
 * one item of the list too large for a page (`item`: its index; consecutive pieces join into it).
 */
export type PageContent = { items: unknown[] } | { text: string } | { text: string; item: number };

export type Capped =
  | { kind: "inline"; data: unknown }
  | {
      kind: "paged";
      summary: ResultSummary;
      skeleton: unknown;
      /** Each page's content (a `PageContent`) as JSON text, ready to store. */
      pages: string[];
    };

/** A list's items with their JSON texts, each serialized once. */
interface MeasuredList {
  path: string;
  items: unknown[];
  texts: string[];
  sizes: number[];
  /** Bytes of the list's own JSON: the items, their commas and the brackets. */
  bytes: number;
}

function measureList(path: string, items: unknown[]): MeasuredList {
  const texts = items.map((item) => JSON.stringify(item) ?? "null");
  const sizes = texts.map(utf8Length);
  const bytes = sizes.reduce((sum, size) => sum + size, 0) + Math.max(0, items.length - 1) + 2;
  return { path, items, texts, sizes, bytes };
}

/**
 * The list to page by: the result itself, or its largest top-level array field. A field named ""
 * is never one: its path would read as the result itself (`list_path` "" is a top-level list), so
 * such a result is paged as text.
 */
function findList(data: unknown): MeasuredList | null {
  if (Array.isArray(data)) return measureList("", data);
  if (typeof data !== "object" || data === null) return null;
  let best: MeasuredList | null = null;
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (key === "" || !Array.isArray(value)) continue;
    const measured = measureList(key, value);
    if (!best || measured.bytes > best.bytes) best = measured;
  }
  return best;
}

/**
 * Pages of whole items, each at most PAGE_BYTES of items where an item allows, joined from their
 * texts; an item past MAX_WHOLE_ITEM_BYTES is cut into pieces of its text instead.
 */
function pagesOfItems(list: MeasuredList): string[] {
  const pages: string[] = [];
  let current: string[] = [];
  let size = 2;
  const flush = () => pages.push(`{"items":[${current.join(",")}]}`);
  list.texts.forEach((text, index) => {
    const itemSize = (list.sizes[index] ?? 0) + 1;
    if (itemSize > MAX_WHOLE_ITEM_BYTES) {
      if (current.length > 0) flush();
      current = [];
      size = 2;
      for (let offset = 0; offset < text.length; offset += PAGE_BYTES)
        pages.push(JSON.stringify({ text: text.slice(offset, offset + PAGE_BYTES), item: index }));
      return;
    }
    if (current.length > 0 && size + itemSize > PAGE_BYTES) {
      flush();
      current = [];
      size = 2;
    }
    current.push(text);
    size += itemSize;
  });
  if (current.length > 0 || pages.length === 0) flush();
  return pages;
}

function firstItems(list: MeasuredList): unknown[] {
  const out: unknown[] = [];
  let size = 0;
  for (let index = 0; index < Math.min(FIRST_ITEMS, list.items.length); index++) {
    size += list.sizes[index] ?? 0;
    if (size > FIRST_ITEMS_BYTES) break;
    out.push(list.items[index]);
  }
  return out;
}

/**
 * Pages of the JSON text, cut every PAGE_BYTES characters (a UTF-16 slice never splits a character's
 * JSON escape; pages join back into the exact text).
 */
function pagesOfText(text: string): string[] {
  const pages: string[] = [];
  for (let offset = 0; offset < text.length; offset += PAGE_BYTES)
    pages.push(JSON.stringify({ text: text.slice(offset, offset + PAGE_BYTES) }));
  return pages;
}

export function capResult(data: unknown, maxBytes: number): Capped {
  const text = JSON.stringify(data) ?? "null";
  const totalBytes = utf8Length(text);
  if (totalBytes <= maxBytes) return { kind: "inline", data };

  const list = findList(data);
  if (list && list.bytes > totalBytes / 2) {
    const pages = pagesOfItems(list);
    const skeleton = list.path === "" ? [] : { ...(data as Record<string, unknown>), [list.path]: [] };
    // The skeleton is the result without its list: its size is the total less the list's.
    const skeletonBytes = list.path === "" ? 2 : totalBytes - list.bytes + 2;
    return {
      kind: "paged",
      summary: {
        total_bytes: totalBytes,
        list_path: list.path,
        total_items: list.items.length,
        first_items: firstItems(list),
        pages: pages.length,
      },
      skeleton: skeletonBytes <= SKELETON_BYTES ? skeleton : null,
      pages,
    };
  }

  const pages = pagesOfText(text);
  return {
    kind: "paged",
    summary: {
      total_bytes: totalBytes,
      list_path: null,
      total_items: null,
      first_items: [],
      pages: pages.length,
    },
    skeleton: null,
    pages,
  };
}
