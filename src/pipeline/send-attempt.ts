import { type Upstream, upstreamUrl } from "../upstream/bindings";
import type { UpstreamAuthorization } from "../upstream/credential";
import type { UpstreamResult } from "./classify";
import type { StoredRequest } from "./run-state";

/** Upstream bodies larger than this are refused rather than buffered into the isolate. */
export const MAX_UPSTREAM_BODY_BYTES = 8 * 1024 * 1024;

export interface AttemptInput {
  upstream: Upstream;
  request: StoredRequest;
  /** Signed for this dispatch (or a declared static key); the only header not part of the stored request. */
  credential: UpstreamAuthorization;
  /** Milliseconds this attempt may take before it is aborted. */
  timeoutMs: number;
  /** The call's W3C trace context for the upstream, or null; like the credential, never stored. */
  traceparent: string | null;
}

/**
 * One attempt of stage "dispatch" (`dispatch.ts`): sends the request and reads the answer, aborting the request when the time is
 * up. The abort is real: the connection closes and a service-bound worker is cancelled, so a
 * timed-out call does not keep working upstream behind the agent's back.
 */
export async function sendAttempt(input: AttemptInput): Promise<UpstreamResult> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("tool timeout", "TimeoutError")),
    input.timeoutMs,
  );
  try {
    const headers = new Headers(input.request.headers);
    headers.set(input.credential.header, input.credential.value);
    if (input.traceparent) headers.set("traceparent", input.traceparent);
    const response = await input.upstream.fetch(
      new Request(upstreamUrl(input.request.target), {
        method: input.request.method,
        headers,
        body: input.request.body ?? undefined,
        signal: controller.signal,
      }),
    );
    const text = await readCapped(response, MAX_UPSTREAM_BODY_BYTES);
    if (text === null) return { kind: "oversized", status: response.status };
    return {
      kind: "response",
      status: response.status,
      contentType: response.headers.get("content-type") ?? "",
      retryAfter: response.headers.get("retry-after"),
      body: text,
    };
  } catch {
    return controller.signal.aborted ? { kind: "timeout" } : { kind: "network_error" };
  } finally {
    clearTimeout(timer);
  }
}

/** One decoder for every body: `decode` without `stream` keeps no state between calls. */
const utf8 = new TextDecoder();

/** The body as text, or null when it is larger than `limit` bytes. */
async function readCapped(response: Response, limit: number): Promise<string | null> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > limit) {
    await response.body?.cancel();
    return null;
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  // Most bodies arrive in one chunk: decoded as it is, without a copy.
  if (chunks.length === 1) return utf8.decode(chunks[0]);
  const joined = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return utf8.decode(joined);
}
