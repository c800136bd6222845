/**
 * The REST door's tool call, `POST /v1/runs/{run_id}/calls`: the one request an agent makes over
 * and over. The Worker's entry sends it straight to the app (src/index.ts), which gives it the
 * security headers itself (src/app.ts); every other request passes the OAuth provider's wrapper and
 * the entry's layer of headers.
 */
export const TOOL_CALL_ROUTE = "/v1/runs/:run_id/calls";

/** The path `TOOL_CALL_ROUTE` matches: a run id is one non-empty segment, as the router reads `:run_id`. */
const TOOL_CALL_PATH = /^\/v1\/runs\/[^/]+\/calls$/;

/** Whether a request is a REST tool call, read from its method and path alone. */
export function isToolCall(request: Request): boolean {
  if (request.method !== "POST") return false;
  const url = request.url;
  // The path starts at the first slash after the scheme's "//" and ends at the query or fragment.
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return false;
  let end = url.length;
  for (const mark of ["?", "#"]) {
    const at = url.indexOf(mark, start);
    if (at >= 0 && at < end) end = at;
  }
  return TOOL_CALL_PATH.test(url.slice(start, end));
}
