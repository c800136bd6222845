import { isInitializeRequest, readRequestBody } from "@modelcontextprotocol/server";
import { MAX_CALL_BODY_BYTES } from "../wire/requests";

/**
 * A POST's body, read once. `json`: parsed. `not-json`: empty or not JSON. `unread`: over
 * MAX_CALL_BODY_BYTES, or its stream failed; `request` still holds it as sent, for the handler
 * that answers it.
 */
export type ReadMessage =
  | { kind: "json"; body: unknown }
  | { kind: "not-json"; text: string }
  | { kind: "unread"; request: Request };

/**
 * The body of a request, at most MAX_CALL_BODY_BYTES. A body framed by its Content-Length (no
 * Transfer-Encoding) is refused or read whole by that length, as hono's bodyLimit does at the REST
 * door: a body over the limit is left unread. A streamed one is counted as it arrives (the SDK's
 * reader), from a copy, so the request keeps it whole for the answer to a body over the limit.
 */
export async function readMessage(request: Request): Promise<ReadMessage> {
  const declared = request.headers.get("content-length");
  const framed = declared !== null && request.body !== null && !request.headers.has("transfer-encoding");
  if (framed && Number(declared) > MAX_CALL_BODY_BYTES) return { kind: "unread", request };
  let text: string;
  try {
    if (framed) text = await request.text();
    else {
      const read = await readRequestBody(
        request.body === null ? request : request.clone(),
        MAX_CALL_BODY_BYTES,
      );
      if (read.tooLarge) return { kind: "unread", request };
      text = read.text;
    }
  } catch {
    return { kind: "unread", request };
  }
  if (text.length === 0) return { kind: "not-json", text };
  try {
    return { kind: "json", body: JSON.parse(text) };
  } catch {
    return { kind: "not-json", text };
  }
}

/** `request` with `text` as its body, for a reader that reads it again. */
export function withBody(request: Request, text: string): Request {
  return new Request(request.url, { method: request.method, headers: request.headers, body: text });
}

/**
 * Whether a parsed message has a field named `__proto__` at any depth. JSON.parse keeps one as an
 * ordinary field; every parse after it (the SDK's schemas among them) sets it as a prototype instead.
 */
export function holdsPrototypeKey(message: unknown): boolean {
  const pending: unknown[] = [message];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (typeof node !== "object" || node === null) continue;
    if (!Array.isArray(node) && Object.hasOwn(node, "__proto__")) return true;
    pending.push(...Object.values(node));
  }
  return false;
}

/** Whether a message is a request, or a batch holds one: something an answer's body can answer. */
export function holdsRequest(body: unknown): boolean {
  const one = (message: unknown) =>
    typeof message === "object" && message !== null && "method" in message && "id" in message;
  return Array.isArray(body) ? body.some(one) : one(body);
}

/** Whether a request (or a batch) holds a `tools/call` with a progress token in its `_meta`. */
export function asksForProgress(body: unknown): boolean {
  const one = (message: unknown): boolean => {
    if (typeof message !== "object" || message === null || !("method" in message)) return false;
    if (message.method !== "tools/call" || !("params" in message)) return false;
    const params = message.params as { _meta?: { progressToken?: unknown } } | null;
    return params?._meta?.progressToken !== undefined;
  };
  return Array.isArray(body) ? body.some(one) : one(body);
}

/** Whether a message is an `initialize` request, or a batch holds one. */
export function holdsInitialize(body: unknown): boolean {
  return Array.isArray(body) ? body.some(isInitialize) : isInitialize(body);
}

/**
 * An `initialize` request, as the SDK's schema says. Only a message whose method is `initialize` can
 * be one, so any other message (a session's every `tools/call`) is told apart without the schema.
 */
function isInitialize(message: unknown): boolean {
  return (
    typeof message === "object" &&
    message !== null &&
    "method" in message &&
    message.method === "initialize" &&
    isInitializeRequest(message)
  );
}

/**
 * One `tools/call` without a progress token: its answer is one JSON body, made whole before it is
 * sent. A call asking for progress opens an event stream at once, and a batch may hold requests
 * that need no run: both are checked before they are served (`resumeSession`).
 */
export function isLoneCall(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  return "method" in body && body.method === "tools/call" && !asksForProgress(body);
}
