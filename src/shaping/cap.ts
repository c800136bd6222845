/**
 * Size caps. A result over its tool's limit is never cut into a broken JSON blob: the model gets a
 * summary (size, counts, first items) and a handle, and the whole result is kept in pages it can
 * read one at a time. Lists are paged by items; anything else by slices of its JSON text.
 */

export const PAGE_BYTES = 16 * 1024;
const FIRST_ITEMS_BYTES = 2 * 1024;
const SKELETON_BYTES = 4 * 1024;

const encoder = new TextEncoder();
export const byteLength = (value: unknown) => encoder.encode(JSON.stringify(value)).byteLength;

export interface ResultSummary {
  total_bytes: number;
  /** Where the paged list sits in the result ("" for a top-level list), or null when text pages. */
  list_path: string | null;
  total_items: number | null;
  first_items: unknown[];
  pages: number;
}

/** One stored page: a slice of the list, or a slice of the JSON text. */
export type PageContent = { items: unknown[] } | { text: string };

export type Capped =
  | { kind: "inline"; data: unknown }
  | { kind: "paged"; summary: ResultSummary; skeleton: unknown; pages: PageContent[] };

/** The list to page by: the result itself, or its largest top-level array field. */
function findList(data: unknown): { path: string; items: unknown[] } | null {
  if (Array.isArray(data)) return { path: "", items: data };
  if (typeof data !== "object" || data === null) return null;
  let best: { path: string; items: unknown[]; size: number } | null = null;
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (!Array.isArray(value)) continue;
    const size = byteLength(value);
    if (!best || size > best.size) best = { path: key, items: value, size };
  }
  return best ? { path: best.path, items: best.items } : null;
}

function chunkItems(items: unknown[]): PageContent[] {
  const pages: PageContent[] = [];
  let current: unknown[] = [];
  let size = 2;
  for (const item of items) {
    const itemSize = byteLength(item) + 1;
    if (current.length > 0 && size + itemSize > PAGE_BYTES) {
      pages.push({ items: current });
      current = [];
      size = 2;
    }
    current.push(item);
    size += itemSize;
  }
  if (current.length > 0 || pages.length === 0) pages.push({ items: current });
  return pages;
}

function firstItems(items: unknown[]): unknown[] {
  const out: unknown[] = [];
  let size = 0;
  for (const item of items.slice(0, 5)) {
    size += byteLength(item);
    if (size > FIRST_ITEMS_BYTES) break;
    out.push(item);
  }
  return out;
}

export function capResult(data: unknown, maxBytes: number): Capped {
  const totalBytes = byteLength(data);
  if (totalBytes <= maxBytes) return { kind: "inline", data };

  const list = findList(data);
  if (list && byteLength(list.items) > totalBytes / 2) {
    const pages = chunkItems(list.items);
    const skeleton = list.path === "" ? [] : { ...(data as Record<string, unknown>), [list.path]: [] };
    return {
      kind: "paged",
      summary: {
        total_bytes: totalBytes,
        list_path: list.path,
        total_items: list.items.length,
        first_items: firstItems(list.items),
        pages: pages.length,
      },
      skeleton: byteLength(skeleton) <= SKELETON_BYTES ? skeleton : null,
      pages,
    };
  }

  const text = JSON.stringify(data);
  const pages: PageContent[] = [];
  for (let offset = 0; offset < text.length; offset += PAGE_BYTES)
    pages.push({ text: text.slice(offset, offset + PAGE_BYTES) });
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
