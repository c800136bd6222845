/** Types of the parts of scripts/tools/openapi-read.mjs the MCP importer reuses. */
export const IMPORT_LIMITS: Readonly<{
  maxBytes: number;
  maxYamlAliases: number;
  maxExpandedNodes: number;
  maxDraftedNodes: number;
  maxDereferenceMs: number;
}>;
