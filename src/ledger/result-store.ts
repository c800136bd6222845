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
 * Large results kept in pages, and the newest version the run has seen of each resource (`seen_at`:
 * when that version was first seen). Both live and expire with the run: a handle means nothing
 * outside it.
 */
export class ResultStore {
  readonly #sql: SqlStorage;
  /** Resource versions, in memory by resource (`observeVersion`). */
  readonly #versions = new Map<string, KnownVersion>();

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
   * Says how a resource version compares with the newest one the run has seen (older is stale) and
   * returns its write, or null when there is nothing to write: a stale answer, or a version already
   * stored. Decided against memory, loaded from storage once per resource: a newer version counts
   * at once, so two reads in flight agree; it is written by the caller in the call's one commit. A
   * call that fails before or in its commit must `forget`, so memory is read again from storage.
   */
  observeVersion(resource: string, version: number, now: number): VersionVerdict {
    const known = this.#known(resource);
    if (known.newest !== null && version < known.newest) {
      return { stale: true, newest_seen: known.newest, record: null };
    }
    known.newest = version;
    if (known.stored !== null && version <= known.stored) {
      return { stale: false, newest_seen: version, record: null };
    }
    return { stale: false, newest_seen: version, record: () => this.#store(resource, version, now) };
  }

  /** Drops the versions kept in memory: the next read of each reads it from storage again. */
  forget(): void {
    this.#versions.clear();
  }

  #known(resource: string): KnownVersion {
    let known = this.#versions.get(resource);
    if (!known) {
      const stored =
        this.#sql
          .exec<{ version: number }>("SELECT version FROM resource_versions WHERE resource = ?", resource)
          .toArray()[0]?.version ?? null;
      known = { newest: stored, stored };
      this.#versions.set(resource, known);
    }
    return known;
  }

  /** Writes a version unless a newer one is stored (another read's commit may have come first). */
  #store(resource: string, version: number, now: number): void {
    this.#sql.exec(
      `INSERT INTO resource_versions (resource, version, seen_at) VALUES (?, ?, ?)
       ON CONFLICT (resource) DO UPDATE SET version = excluded.version, seen_at = excluded.seen_at
       WHERE excluded.version > resource_versions.version`,
      resource,
      version,
      now,
    );
    const known = this.#versions.get(resource);
    if (known) known.stored = Math.max(known.stored ?? version, version);
  }
}

/** The newest version of a resource the run has seen (`newest`), and the one its storage holds. */
interface KnownVersion {
  newest: number | null;
  stored: number | null;
}

export interface VersionVerdict {
  stale: boolean;
  newest_seen: number | null;
  record: (() => void) | null;
}
