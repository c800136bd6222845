import { readBounded } from "../core/answer-meter";
import type { StoredRequest } from "../machine/run-state";
import { attachCredential } from "./attach-credential";
import { type Upstream, upstreamUrl } from "./bindings";
import type { UpstreamResult } from "./classify";
import type { UpstreamAuthorization } from "./credential";

export interface AttemptInput {
  upstream: Upstream;
  request: StoredRequest;
  /** Signed for this dispatch (or a declared static key); the only credential, never part of the stored request. */
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
    const url = new URL(upstreamUrl(input.request.target));
    attachCredential(url, headers, input.credential);
    if (input.traceparent) headers.set("traceparent", input.traceparent);
    const response = await input.upstream.fetch(
      new Request(url, {
        method: input.request.method,
        headers,
        body: input.request.body ?? undefined,
        signal: controller.signal,
      }),
    );
    // Counted as it streams and cut at the first bound crossed (core/answer-bounds.ts).
    const read = await readBounded(response);
    if (!read.ok) return { kind: "too_large", status: response.status, exceeded: read.exceeded };
    return {
      kind: "response",
      status: response.status,
      contentType: response.headers.get("content-type") ?? "",
      retryAfter: response.headers.get("retry-after"),
      body: read.text,
    };
  } catch {
    return controller.signal.aborted ? { kind: "timeout" } : { kind: "network_error" };
  } finally {
    clearTimeout(timer);
  }
}
