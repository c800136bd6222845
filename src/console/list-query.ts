import type * as z from "zod";
import { type ProblemSubject, problemsFromIssues } from "../machine/validate";
import type { Problem } from "../wire/envelope";

/**
 * The console's list pages read their filters from the query string, through the same schemas as
 * the JSON API (src/approvals/list-filters.ts), so a search means the same at both doors. A filter
 * form sends every field, filled or not: empty ones are dropped before parsing.
 */

const FILTER_FORM: ProblemSubject = {
  root: "filters",
  prefix: "",
  object: "filters",
  objectHint: "Use the filter form.",
  fallbackHint: "Use the filter form.",
};

/** Console parameters that are not filters: `refresh=off` pauses live updates. */
const NOT_FILTERS = new Set(["refresh"]);

/** A list page's filter values as the form shows them: every non-empty parameter, the last of a repeat. */
export function filterValues(url: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of new URL(url).searchParams) {
    if (NOT_FILTERS.has(name)) continue;
    if (value.trim() === "") delete values[name];
    else values[name] = value;
  }
  return values;
}

export type ParsedFilters<T> = { ok: true; filters: T } | { ok: false; problems: Problem[] };

export function parseFilters<S extends z.ZodType>(
  schema: S,
  values: Record<string, string>,
): ParsedFilters<z.output<S>> {
  const parsed = schema.safeParse(values, { reportInput: true });
  if (parsed.success) return { ok: true, filters: parsed.data };
  return { ok: false, problems: problemsFromIssues(schema, parsed.error.issues, FILTER_FORM) };
}

/** A link to `path` with these filter values, optionally replacing some (undefined removes one). */
export function hrefWith(
  path: string,
  values: Record<string, string>,
  changes: Record<string, string | undefined> = {},
): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...values, ...changes })) {
    if (value !== undefined) params.set(name, value);
  }
  const query = params.toString();
  return query === "" ? path : `${path}?${query}`;
}
