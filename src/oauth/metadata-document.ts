import type { CimdFetchError } from "@cloudflare/workers-oauth-provider";

/**
 * What the consent page says when a client's metadata document (its client_id is the document's
 * https URL, MCP 2026-07-28) cannot be used: not found, over the library's 5 KB, slower than its
 * 10 s, not JSON, or not a valid description of the client. Nothing is granted, and the request
 * does not go back to the client: without a valid document its redirect URIs are unknown, so a
 * redirect could hand the answer to an address the client never listed.
 */
export function metadataDocumentRefusal(error: CimdFetchError): string {
  return `The application names itself by the metadata document at ${error.metadataUrl}, which could not be used: ${error.detail}. Nothing was granted; the application's publisher has to fix the document.`;
}
