/**
 * Canonical JSON in the spirit of RFC 8785 (JCS): object keys sorted by UTF-16 code units at every
 * depth, no whitespace, numbers in their shortest round-trip form (so `1.0` and `1` are the same
 * value), strings escaped by JSON.stringify. Two argument objects that mean the same thing produce
 * the same text, whatever order or spacing the model used.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value))
        throw new TypeError("canonical JSON has no representation for NaN or Infinity");
      // ECMAScript's Number→string is the shortest round-trip form JCS prescribes; -0 serialises as 0.
      return JSON.stringify(value);
    case "string":
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value))
        return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(",")}]`;
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, item]) => item !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
    }
    default:
      throw new TypeError(`canonical JSON cannot represent a ${typeof value}`);
  }
}

/** The top-level fields of two objects whose values differ as canonical JSON, sorted: absent differs from present. */
export function differingFields(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const fields = new Set([...Object.keys(a), ...Object.keys(b)]);
  const text = (value: unknown) => (value === undefined ? undefined : canonicalJson(value));
  return [...fields].filter((field) => text(a[field]) !== text(b[field])).sort();
}
