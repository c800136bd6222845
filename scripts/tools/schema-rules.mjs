// What a catalog schema may hold, read the one way by the catalog's compiler (zod-source.ts) and by
// the importers (openapi-schema.mjs), so an importer reports exactly what the compiler would refuse.

/**
 * A JSON Schema `pattern` as a regular expression: over characters, as the `u` flag reads it (as
 * JSON Schema and the validators upstreams use read one: `^.$` matches one emoji, `\p{L}` any
 * letter); a pattern only the older grammar accepts (an escaped `_`, a lone `{`) as that grammar
 * reads it; null when neither accepts it.
 *
 * @param {string} pattern
 * @returns {RegExp | null}
 */
export function patternRegExp(pattern) {
  for (const flags of ["u", ""]) {
    try {
      return new RegExp(pattern, flags);
    } catch {
      // The next grammar, or none.
    }
  }
  return null;
}

/**
 * Whether an `enum` or `const` value can be a zod literal: a string, number, boolean or null. zod
 * compares literals by identity, and reads an array given to `z.literal` as a list of literals, so
 * `enum: [[1]]` would accept `1`.
 *
 * @param {unknown} value
 * @returns {boolean}
 */
export function isLiteralValue(value) {
  return typeof value !== "object" || value === null;
}

/**
 * The `required` names of an object schema that its `properties` do not declare (own fields only:
 * `toString` is not declared by every object). An input refuses undeclared fields, so such a field
 * could never be sent.
 *
 * @param {Record<string, unknown>} schema
 * @returns {unknown[]}
 */
export function undeclaredRequired(schema) {
  const properties =
    typeof schema.properties === "object" && schema.properties !== null ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  return required.filter((name) => typeof name !== "string" || !Object.hasOwn(properties, name));
}
