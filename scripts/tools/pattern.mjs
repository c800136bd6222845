// A JSON Schema `pattern` as a regular expression, read the one way both the catalog's compiler
// (zod-source.ts) and the importers (openapi-schema.mjs) read it.

/**
 * The pattern over characters, as the `u` flag reads it (as JSON Schema and the validators upstreams
 * use read one: `^.$` matches one emoji, `\p{L}` any letter); a pattern only the older grammar
 * accepts (an escaped `_`, a lone `{`) as that grammar reads it; null when neither accepts it.
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
