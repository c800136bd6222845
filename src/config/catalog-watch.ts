/**
 * CATALOG_WATCH_MS, optional: how often an open `subscriptions/listen` stream asks which catalog is
 * live (src/mcp/catalog-watch.ts). 30 s unless set; a listener learns of a deploy within it.
 */
export function parseCatalogWatchMs(raw: string | undefined): number {
  if (raw === undefined || raw === "") return 30_000;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 10 || ms > 600_000) {
    throw new Error(
      `CATALOG_WATCH_MS must be an integer from 10 to 600000 milliseconds (got ${JSON.stringify(raw)})`,
    );
  }
  return ms;
}
