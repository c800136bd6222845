/**
 * Field paths used by tool definitions to point into results: `email`, `address`,
 * `recent_messages[].body`. `[]` means "every element of this array".
 */

type Json = unknown;

/** Returns a copy of `value` with `transform` applied to every value the path reaches. */
export function updateAtPath(value: Json, path: string, transform: (leaf: Json) => Json): Json {
  return updateParts(value, path.split("."), transform);
}

function updateParts(value: Json, parts: string[], transform: (leaf: Json) => Json): Json {
  const [head, ...rest] = parts;
  if (head === undefined) return transform(value);
  const each = head.endsWith("[]");
  const key = each ? head.slice(0, -2) : head;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const record = value as Record<string, Json>;
  if (!(key in record)) return value;
  const child = record[key];
  if (each) {
    if (!Array.isArray(child)) return value;
    return { ...record, [key]: child.map((item) => updateParts(item, rest, transform)) };
  }
  return { ...record, [key]: updateParts(child, rest, transform) };
}
