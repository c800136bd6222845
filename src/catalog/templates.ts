/**
 * The small template language of declared tools (catalog/*.yaml): JSON pointers into a call's
 * arguments or result, JSON templates whose `{ arg: "/pointer" }` objects stand for an argument,
 * and path templates whose `{field}` placeholders are filled URL-encoded. Pure, so a declared
 * tool's request is a function of its arguments exactly as a code tool's is.
 */

/** A JSON pointer's reference tokens, unescaped (RFC 6901: `~1` is `/`, `~0` is `~`). */
export function pointerTokens(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((raw) => raw.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** The value at an RFC 6901 JSON pointer, or undefined where there is none. */
export function resolvePointer(value: unknown, pointer: string): unknown {
  let current: unknown = value;
  for (const token of pointerTokens(pointer)) {
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, token)) return undefined;
    current = (current as Record<string, unknown>)[token];
  }
  return current;
}

/** The value at a dotted path of a shaped result (`destination.city`), as the catalog's rules name fields. */
export function valueAtPath(value: unknown, path: string): unknown {
  return resolvePointer(value, path === "" ? "" : `/${path.split(".").join("/")}`);
}

function isRef(value: unknown, key: "arg" | "result"): value is Record<typeof key, string> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as Record<string, unknown>)[key] === "string"
  );
}

/**
 * A JSON template filled in: `{ arg: "/p" }` becomes the argument at `/p` and `{ result: "/p" }`
 * the result's value there; a field whose reference resolves to nothing (an optional argument left
 * out) is dropped rather than sent as null.
 */
export function fillTemplate(template: unknown, args: unknown, result?: unknown): unknown {
  if (isRef(template, "arg")) return resolvePointer(args, template.arg);
  if (isRef(template, "result")) return resolvePointer(result, template.result);
  if (Array.isArray(template)) return template.map((item) => fillTemplate(item, args, result));
  if (typeof template === "object" && template !== null) {
    const filled: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(template)) {
      const value = fillTemplate(item, args, result);
      if (value !== undefined) filled[key] = value;
    }
    return filled;
  }
  return template;
}

/** The `{name}` placeholders of a path template, in order. */
export function placeholders(path: string): string[] {
  return [...path.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1] ?? "");
}

/**
 * Why `value` cannot fill a path placeholder, or null when it can. fillPath encodes a slash, `?`
 * and `#`, so a value stays inside its segment; but a segment that is `.` or `..` names the same or
 * the parent resource once the URL is resolved (`/tickets/..` is `/`), and an empty one another path
 * (`/orders/` lists what `/orders/{id}` reads one of). No encoding keeps those: the URL standard
 * reads `%2e` as a dot in a path. So such a value is refused before the call, never sent.
 */
export function pathValueProblem(value: unknown): string | null {
  if (value === undefined || value === null) return "missing required field";
  const text = String(value);
  if (text === "" || text === "." || text === "..") {
    return `${JSON.stringify(text)} cannot fill a URL path: it would name another resource`;
  }
  return null;
}

/** A path template filled with values, each URL-encoded so an argument cannot add a path segment. */
export function fillPath(path: string, values: Record<string, unknown>): string {
  return path.replace(/\{([^{}]+)\}/g, (_, name: string) => encodeURIComponent(String(values[name] ?? "")));
}

/**
 * A sentence template filled with named values: `{limit}` or `{args.order_id}` (a dotted path into
 * a value) becomes that value as text. A declaration writes refusals, approval reasons and verdicts
 * in its own words this way; a placeholder naming nothing becomes an empty string (`check` refuses
 * one it cannot resolve, so only data the call lacks, never a typo, is left empty).
 */
export function fillText(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{([^{}]+)\}/g, (_, path: string) => {
    const value = valueAtPath(values, path);
    if (value === undefined || value === null) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}
