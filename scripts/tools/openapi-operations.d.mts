/** Types of the parts of scripts/tools/openapi-operations.mjs the MCP importer reuses. */
export const REVIEW: "TODO(review):";
export function snakeCase(operationId: string): string;
