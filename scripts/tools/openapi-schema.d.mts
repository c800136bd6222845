/** Types of the parts of scripts/tools/openapi-schema.mjs the MCP importer reuses. */
export function toCatalogSchema(
  schema: unknown,
  direction: "input" | "output",
  location: string,
  report: (location: string, message: string) => void,
  walk?: { path?: string; omitted?: Map<string, string> },
): Record<string, unknown> | null;
export function freeTextPaths(schema: Record<string, unknown>): string[];
export function describeInputFields(schema: Record<string, unknown>): void;
