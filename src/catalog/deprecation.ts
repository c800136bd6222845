import type { ToolSpec } from "./define-tool";

/**
 * A tool on its way out: since when it is deprecated, when it stops answering (its sunset), the tool
 * to use instead, and why. Until the sunset it is listed with the notice in its description and
 * every answer of it carries the notice (REST: the `Deprecation` and `Sunset` headers of RFC 9745
 * and RFC 8594, and the envelope's `deprecation`; MCP: in the text the model reads); from the sunset
 * on, a call of it is refused with `tool_retired`, naming `use_instead`. Dates are ISO 8601: a day
 * (midnight UTC) or a date-time with its offset.
 */
export interface Deprecation {
  since: string;
  sunset: string;
  /** A tool of the same namespace by name, or `namespace.tool`. */
  use_instead: string;
  why: string;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/** When an ISO 8601 day or date-time is, in epoch milliseconds; NaN when it is not one. */
export function instantOf(date: string): number {
  if (!ISO_DATE.test(date)) return Number.NaN;
  return Date.parse(date.length === 10 ? `${date}T00:00:00Z` : date);
}

/** Whether the tool's sunset has come: its calls are refused from then on. */
export function isRetired(deprecated: Deprecation, now: number): boolean {
  return now >= instantOf(deprecated.sunset);
}

/** The tool a deprecation names, found in the catalog's namespaces (`namespace.tool`, or its own). */
export function replacementOf(
  deprecated: Deprecation,
  namespace: string,
  find: (namespace: string, name: string) => ToolSpec | undefined,
): ToolSpec | undefined {
  const [first = "", second] = deprecated.use_instead.split(".");
  return second === undefined ? find(namespace, first) : find(first, second);
}

/**
 * The rules `check` and the catalog's load hold a deprecation to: a sunset after `since`, and a
 * replacement that is served and not itself the deprecated tool.
 */
export function deprecationProblems(
  tool: ToolSpec,
  find: (namespace: string, name: string) => ToolSpec | undefined,
): string[] {
  const deprecated = tool.deprecated;
  if (!deprecated) return [];
  const problems: string[] = [];
  const since = instantOf(deprecated.since);
  const sunset = instantOf(deprecated.sunset);
  if (Number.isNaN(since) || Number.isNaN(sunset)) {
    problems.push(`tool "${tool.name}": deprecated.since and deprecated.sunset must be ISO 8601 dates`);
  } else if (sunset <= since) {
    problems.push(
      `tool "${tool.name}": deprecated.sunset (${deprecated.sunset}) must come after deprecated.since (${deprecated.since})`,
    );
  }
  const replacement = replacementOf(deprecated, tool.namespace, find);
  if (!replacement) {
    problems.push(
      `tool "${tool.name}": deprecated.use_instead names "${deprecated.use_instead}", which is not a tool of the catalog; name a tool of namespace "${tool.namespace}", or namespace.tool`,
    );
  } else if (replacement === tool) {
    problems.push(`tool "${tool.name}": deprecated.use_instead names the tool itself`);
  }
  return problems;
}

/** The notice a model reads in a deprecated tool's description and answers. */
export function deprecationNotice(name: string, deprecated: Deprecation): string {
  return `Deprecated since ${deprecated.since}: ${deprecated.why} Use ${deprecated.use_instead} instead; calls of ${name} are refused from ${deprecated.sunset}.`;
}

/** RFC 9745's `Deprecation` value: a Structured Field Date, `@` and the epoch seconds. */
export function deprecationHeader(deprecated: Deprecation): string {
  return `@${Math.floor(instantOf(deprecated.since) / 1000)}`;
}

/** RFC 8594's `Sunset` value: an HTTP-date (IMF-fixdate). */
export function sunsetHeader(deprecated: Deprecation): string {
  return new Date(instantOf(deprecated.sunset)).toUTCString();
}
