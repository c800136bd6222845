/** Types of bench/source-map.mjs, for the tests. */
export function sourceMapLookup(
  map: { mappings: string; sources: string[]; names: string[]; sourceRoot?: string },
  bundlePath: string,
  root: string,
): (line: number, column: number) => { source: string; line: number; name: string | null } | null;
