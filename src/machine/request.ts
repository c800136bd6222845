import type { ToolSpec } from "../catalog/define-tool";
import { idempotencyHeaderOf } from "../catalog/key-promise";
import { canonicalJson } from "../core/canonical-json";
import type { FailureSpec } from "../wire/envelope";
import type { AttemptRecord } from "../wire/trace-entry";
import type { StoredRequest } from "./run-state";

/**
 * A call's upstream request as data: built once from its validated arguments and stored under its
 * key, and what sending it ended in. Pure: sending is `upstream/dispatch.ts`'s.
 */

/** What a dispatch ended in: the validated output, or the failure, with every attempt the trace keeps. */
export type Execution =
  | { ok: true; data: unknown; status: number; attempts: AttemptRecord[] }
  | { ok: false; failure: FailureSpec; status: number | null; attempts: AttemptRecord[] };

/** Any origin parses a path; the binding that sends a request rewrites it (`upstream/bindings.ts`). */
const PARSING_ORIGIN = "https://upstream.internal";

/** A request's path and query, as stored with a key: `/orders/A1001?expand=refunds`. */
export function upstreamTarget(path: string, query?: Record<string, string>): string {
  const url = new URL(path, PARSING_ORIGIN);
  for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
  return `${url.pathname}${url.search}`;
}

/**
 * The upstream request of a call, built once from its validated arguments: the body is serialized
 * here and nowhere else, so the bytes stored under a key are the bytes every attempt sends. The
 * body is canonical JSON, so the same arguments make the same bytes whatever order they came in.
 */
export function buildRequest(
  tool: ToolSpec,
  args: Record<string, unknown>,
  ids: { key: string | null; callId: string },
): StoredRequest {
  // The catalog gives every tool that is not built in an upstream; a built-in one sends nothing.
  if (!tool.upstream) throw new Error(`${tool.name} is built in: it has no upstream request`);
  const request = tool.upstream.request(args);
  // A tool's literal headers go first, so none of them can replace the proxy's own.
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
  headers.accept = "application/json";
  headers["x-request-id"] = ids.callId;
  if (ids.key) headers[idempotencyHeaderOf(tool)] = ids.key;
  let body: string | null = null;
  if (request.body !== undefined) {
    body = canonicalJson(request.body);
    headers["content-type"] = "application/json";
  }
  return { method: request.method, target: upstreamTarget(request.path, request.query), headers, body };
}
