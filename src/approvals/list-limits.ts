/**
 * Page sizes of the operator's lists. Apart from their query schemas (list-filters.ts), so the
 * directory, which every isolate loads, does not build the schemas only the operator routes use.
 */
export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 100;
