import { type DocumentAnswer, fetchDocument } from "../egress/remembered-fetch";
import { hostKey } from "../egress/target";
import type { Env } from "../env";

/**
 * The OAuth provider library fetches, on a client's behalf, the client's metadata document (its
 * client_id is the document's https URL, MCP 2026-07-28) and the key set that document may point
 * to. Version 1.2.3 takes no fetch option and no URL check: it calls the global `fetch`, follows
 * redirects, and reads its Cache API entry first. Neither lever is enough on its own:
 *
 * - pre-filling the library's Cache API entry with a document fetched through the guard would work
 *   only where the Cache API stores anything (a custom domain; on workers.dev it stores nothing), and
 *   elsewhere the library would fetch again, unguarded, a URL whose server may answer differently
 *   the second time;
 * - swapping the global `fetch` around one call is not safe with concurrent requests in an isolate.
 *
 * So the global `fetch` is routed once per isolate, for good: a request carrying the library's
 * `User-Agent` (`workers-oauth-provider/…`, set on every outbound fetch it makes) is answered from
 * src/egress/remembered-fetch.ts (the guard, its memory and its throttle) and never reaches the
 * network itself; every other fetch passes through untouched. The token endpoint resolves a
 * client's document before the library sees the request (`prefetchTokenClient`), so the source
 * address's throttle applies and the library's fetch is answered from memory. If a library upgrade
 * stopped sending that header, its fetches would go out unguarded (Cloudflare's network still
 * refuses private addresses in production): test/workerd/egress-cimd.test.ts fails then, since it
 * sees the library follow a redirect the guard refuses.
 */

const LIBRARY_AGENT = "workers-oauth-provider/";

/** What the library is told of every failure, so its answers cannot tell one failure from another. */
export const DOCUMENT_UNAVAILABLE =
  "the document could not be fetched (the proxy does not say whether the address was refused, unreachable, slow, redirected or answered with an error)";

/** Marks the routed fetch, so routing twice (or after a test replaced `fetch`) is seen. */
const ROUTED = Symbol.for("edge-tool-proxy.library-fetch");

/** A worker answers on a handful of hostnames; more than this means junk Host headers. */
const MAX_OWN_HOSTS = 16;
const ownHosts = new Set<string>();

/** The hostname a request reached the proxy on: a document there would be the proxy's own API. */
export function noteOwnHost(hostname: string): void {
  const key = hostKey(hostname);
  if (ownHosts.has(key)) return;
  if (ownHosts.size >= MAX_OWN_HOSTS) ownHosts.clear();
  ownHosts.add(key);
}

type Fetch = typeof fetch;

function userAgentOf(input: RequestInfo | URL, init: RequestInit | undefined): string {
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  return headers.get("user-agent") ?? "";
}

function asResponse(answer: DocumentAnswer): Response {
  if (!answer.ok) throw new Error(DOCUMENT_UNAVAILABLE);
  const headers = new Headers();
  if (answer.document.content_type) headers.set("content-type", answer.document.content_type);
  if (answer.document.cache_control) headers.set("cache-control", answer.document.cache_control);
  return new Response(answer.document.body, { status: 200, headers });
}

/** Routes the library's fetches through the guard from now on in this isolate (see above). */
export function routeLibraryFetches(env: Env): void {
  const current = globalThis.fetch as Fetch & { [ROUTED]?: true };
  if (current[ROUTED]) return;
  const routed = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    if (!userAgentOf(input, init).startsWith(LIBRARY_AGENT)) return current(input, init);
    const url = input instanceof Request ? input.url : String(input);
    return asResponse(await fetchDocument(env, url, { source: null, ownHosts }));
  };
  globalThis.fetch = Object.assign(routed, { [ROUTED]: true as const }) as Fetch;
}

/**
 * The client a token request names (its `client_id` field, or the user of HTTP Basic
 * authentication), when that is a metadata document's URL; null otherwise.
 */
async function documentClientOf(request: Request): Promise<string | null> {
  let clientId: string | null = null;
  const basic = /^Basic\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (basic) {
    try {
      clientId = decodeURIComponent(atob(basic).split(":")[0] ?? "");
    } catch {
      clientId = null;
    }
  }
  if (!clientId && /^application\/x-www-form-urlencoded/i.test(request.headers.get("content-type") ?? "")) {
    clientId = new URLSearchParams(new TextDecoder().decode(await request.clone().arrayBuffer())).get(
      "client_id",
    );
  }
  // The library resolves only an https URL with a path; anything else it looks up as a registration.
  return clientId && /^https:\/\/[^/?#]+\//i.test(clientId) ? clientId : null;
}

/**
 * Before the token endpoint looks a client up: a client named by a document is resolved here,
 * where the request's source address is known, so a flood of token requests naming fresh
 * documents is refused (429, `Retry-After`) instead of fetched. Any other outcome lets the request
 * through: the library then reads what was fetched, or is told the document is unavailable, and
 * answers as it answers every unknown client.
 */
export async function prefetchTokenClient(request: Request, env: Env): Promise<Response | null> {
  const clientId = await documentClientOf(request);
  if (!clientId) return null;
  noteOwnHost(new URL(request.url).hostname);
  const answer = await fetchDocument(env, clientId, {
    source: request.headers.get("cf-connecting-ip"),
    ownHosts,
  });
  if (answer.ok || answer.kind !== "throttled") return null;
  const seconds = Math.max(1, Math.ceil(answer.retry_after_ms / 1_000));
  return new Response(
    JSON.stringify({
      error: "temporarily_unavailable",
      error_description: `Too many client metadata documents fetched for this address or this client; try again in ${seconds} s.`,
    }),
    {
      status: 429,
      headers: {
        "content-type": "application/json",
        "cache-control": "no-store",
        "retry-after": String(seconds),
      },
    },
  );
}
