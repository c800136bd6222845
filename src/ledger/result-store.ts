import type { PageContent, ResultSummary } from "../shaping/cap";
import type { ResultPage } from "../tools/builtins";

export const RESULTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS result_pages (
  handle TEXT NOT NULL,
  page INTEGER NOT NULL,
  tool TEXT NOT NULL,
  total_pages INTEGER NOT NULL,
  list_path TEXT,
  content TEXT NOT NULL,
  PRIMARY KEY (handle, page)
);
CREATE TABLE IF NOT EXISTS resource_versions (
  resource TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  seen_at INTEGER NOT NULL
);
`;

/**
 * Large results kept in pages, and the newest version the run has seen of each resource. Both live
 * and expire with the run: a handle means nothing outside it.
 */
export class ResultStore {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Stores a paged result; each page is its content's JSON text, as `capResult` cut it. */
  savePages(handle: string, tool: string, summary: ResultSummary, pages: readonly string[]): void {
    pages.forEach((content, page) => {
      this.#sql.exec(
        "INSERT INTO result_pages (handle, page, tool, total_pages, list_path, content) VALUES (?, ?, ?, ?, ?, ?)",
        handle,
        page,
        tool,
        pages.length,
        summary.list_path,
        content,
      );
    });
  }

  page(handle: string, cursor: number): ResultPage | null {
    const row = this.#sql
      .exec<{ total_pages: number; list_path: string | null; content: string }>(
        "SELECT total_pages, list_path, content FROM result_pages WHERE handle = ? AND page = ?",
        handle,
        cursor,
      )
      .toArray()[0];
    if (!row) return null;
    const content = JSON.parse(row.content) as PageContent;
    return {
      handle,
      cursor,
      next_cursor: cursor + 1 < row.total_pages ? cursor + 1 : null,
      total_pages: row.total_pages,
      list_path: row.list_path,
      ...content,
    };
  }

  /**
   * Records a resource version and says how it compares with the newest one seen before: an answer
   * older than what the run already read is stale. One upsert in the usual case (a first or a newer
   * version); only a stale answer reads the newest version back.
   */
  observeVersion(
    resource: string,
    version: number,
    now: number,
  ): { stale: boolean; newest_seen: number | null } {
    const kept = this.#sql
      .exec<{ version: number }>(
        `INSERT INTO resource_versions (resource, version, seen_at) VALUES (?, ?, ?)
         ON CONFLICT (resource) DO UPDATE SET version = excluded.version, seen_at = excluded.seen_at
         WHERE excluded.version >= resource_versions.version
         RETURNING version`,
        resource,
        version,
        now,
      )
      .toArray()[0];
    if (kept) return { stale: false, newest_seen: kept.version };
    const newest = this.#sql
      .exec<{ version: number }>("SELECT version FROM resource_versions WHERE resource = ?", resource)
      .one().version;
    return { stale: true, newest_seen: newest };
  }
}
