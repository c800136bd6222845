import { readBody } from "../core/read-body";
import { hostKey, refusedTarget, type TargetRefusal } from "./target";

/**
 * One fetch the proxy makes on someone's behalf, to an address someone else named: a client's
 * metadata document, a webhook or alert receiver, later an identity provider's key set. Tool calls
 * never come here: their upstreams are bindings the deployment chose.
 *
 * Every hop is checked before it is sent (src/egress/target.ts: https, a public host, not the
 * proxy itself); redirects are followed by hand, each Location checked like the first URL, at most
 * `max_redirects` of them (0 refuses every redirect); the whole exchange, hops and body, is aborted
 * at `timeout_ms`; the body is counted as it is read and the read aborted past `max_bytes`.
 *
 * A failure says why in `failure` for the log, and callers answer every failure alike: whether the
 * target refused, timed out, redirected or was never tried must not be readable from the answer.
 */

export interface EgressLimits {
  max_redirects: number;
  max_bytes: number;
  timeout_ms: number;
}

export type EgressFailure =
  | TargetRefusal
  | { reason: "too_many_redirects" }
  | { reason: "status"; status: number }
  | { reason: "too_large" }
  | { reason: "timed_out" }
  | { reason: "network" };

export type EgressAnswer =
  | { ok: true; url: string; status: number; headers: Headers; body: Uint8Array }
  | { ok: false; failure: EgressFailure };

export interface EgressRequest {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
}

/** Sent on every hop, so a receiver can tell the proxy's fetches from a browser's. */
const USER_AGENT = "edge-tool-proxy (outbound fetch on a client's behalf)";

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * @example
 * const answer = await guardedFetch("https://client.example/oauth.json", {}, {
 *   limits: { max_redirects: 3, max_bytes: 5 * 1024, timeout_ms: 3_000 },
 *   ownHosts: new Set(["proxy.example"]),
 * });
 * if (answer.ok) new TextDecoder().decode(answer.body);
 */
export async function guardedFetch(
  target: string,
  request: EgressRequest,
  options: {
    limits: EgressLimits;
    ownHosts: Iterable<string>;
    /** Whether the answer's body is wanted; a receiver's acknowledgement is its status alone. */
    discardBody?: boolean;
  },
): Promise<EgressAnswer> {
  const { limits } = options;
  const ownHosts = new Set([...options.ownHosts].map(hostKey));
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), limits.timeout_ms);
  try {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return { ok: false, failure: { reason: "not_https" } };
    }
    for (let hop = 0; ; hop++) {
      const refused = refusedTarget(url, ownHosts);
      if (refused) return { ok: false, failure: refused };
      // Redirects are never left to fetch: each Location is checked above before it is sent.
      const response = await fetch(url, {
        method: hop === 0 ? (request.method ?? "GET") : "GET",
        headers: { "user-agent": USER_AGENT, ...request.headers },
        body: hop === 0 ? request.body : undefined,
        redirect: "manual",
        signal: controller.signal,
      });
      const location = response.headers.get("location");
      if (REDIRECTS.has(response.status) && location !== null) {
        await response.body?.cancel();
        // A redirect of a POST would resend (or drop) a signed body elsewhere: never followed.
        if (hop >= limits.max_redirects || request.method === "POST") {
          return { ok: false, failure: { reason: "too_many_redirects" } };
        }
        url = new URL(location, url);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        return { ok: false, failure: { reason: "status", status: response.status } };
      }
      if (options.discardBody) {
        await response.body?.cancel();
        return {
          ok: true,
          url: url.href,
          status: response.status,
          headers: response.headers,
          body: new Uint8Array(),
        };
      }
      const body = await readCapped(response, limits.max_bytes);
      if (!body) return { ok: false, failure: { reason: "too_large" } };
      return { ok: true, url: url.href, status: response.status, headers: response.headers, body };
    }
  } catch {
    return { ok: false, failure: { reason: controller.signal.aborted ? "timed_out" : "network" } };
  } finally {
    clearTimeout(timer);
  }
}

/** The body, or null once it passes `maxBytes` (the read is cancelled there, not finished). */
async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array | null> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    return null;
  }
  let total = 0;
  const read = await readBody(response, (chunk) => {
    total += chunk.byteLength;
    return total > maxBytes ? "too_large" : null;
  });
  return read.ok ? read.body : null;
}
