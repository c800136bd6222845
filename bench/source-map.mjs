// A source map's lookup, enough to name where a profiled function of the minified bundle was
// written: its original file, line and (where the map records one) name. Version 3 maps only.
import { dirname, relative, resolve } from "node:path";

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = Object.fromEntries([...BASE64].map((char, index) => [char, index]));

/** The numbers of one segment of a mapping (Base64 VLQ). */
function decodeSegment(text) {
  const values = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = DIGIT[char];
    if (digit === undefined) throw new Error(`source map: not a Base64 digit: ${char}`);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    values.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return values;
}

/**
 * The map's segments, line by line of the generated file: `[column, source, line, column, name?]`,
 * each line's in ascending generated column (as a map writes them).
 */
function decodeMappings(mappings) {
  const lines = [];
  let source = 0;
  let originalLine = 0;
  let originalColumn = 0;
  let name = 0;
  for (const lineText of mappings.split(";")) {
    const segments = [];
    let column = 0;
    for (const segmentText of lineText.split(",")) {
      if (segmentText === "") continue;
      const fields = decodeSegment(segmentText);
      column += fields[0];
      if (fields.length < 4) continue;
      source += fields[1];
      originalLine += fields[2];
      originalColumn += fields[3];
      if (fields.length > 4) name += fields[4];
      segments.push([column, source, originalLine, originalColumn, fields.length > 4 ? name : -1]);
    }
    lines.push(segments);
  }
  return lines;
}

/**
 * `lookup(line, column)` (both 0-based, in the generated file) for the map `map` (parsed JSON) of
 * the bundle at `bundlePath`, its sources named relative to `root`:
 * `{ source, line, name }` of the nearest mapped position at or before it on that line (1-based
 * line; `name` null where the map has none), or null where the line has no mapping before it.
 */
export function sourceMapLookup(map, bundlePath, root) {
  const lines = decodeMappings(map.mappings);
  const from = resolve(dirname(bundlePath), map.sourceRoot ?? "");
  const sources = map.sources.map((source) => relative(root, resolve(from, source)));
  return (line, column) => {
    const segments = lines[line];
    if (!segments || segments.length === 0) return null;
    let low = 0;
    let high = segments.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (segments[middle][0] <= column) {
        found = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    if (found === -1) return null;
    const [, source, originalLine, , name] = segments[found];
    return {
      source: sources[source] ?? "?",
      line: originalLine + 1,
      name: name >= 0 ? map.names[name] : null,
    };
  };
}
