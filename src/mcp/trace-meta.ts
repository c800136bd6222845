import type { HeaderReader } from "../door/entry";

/**
 * The headers of an MCP `tools/call`, with the caller's trace context read from the request's
 * `params._meta.traceparent` (the unprefixed key the 2026-07-28 revision reserves for W3C Trace
 * Context) before the HTTP `traceparent` header. A `_meta.traceparent` that is not a string is
 * malformed: it is ignored like any malformed traceparent, and the call starts its own span.
 */
export function withMetaTraceparent(header: HeaderReader, meta: unknown): HeaderReader {
  if (typeof meta !== "object" || meta === null || !("traceparent" in meta)) return header;
  const value: unknown = (meta as { traceparent: unknown }).traceparent;
  const traceparent = typeof value === "string" ? value : undefined;
  return (name) => (name.toLowerCase() === "traceparent" ? traceparent : header(name));
}
