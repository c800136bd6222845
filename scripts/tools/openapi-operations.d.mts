/** Types of the parts of scripts/tools/openapi-operations.mjs the MCP importer reuses. */
export const REVIEW: "TODO(review):";
export function snakeCase(operationId: string): string;
/** A marker per input field that reads like a credential, by its path (`not_credentials`). */
export function credentialMarkers(input: Record<string, unknown>): Record<string, string>;
