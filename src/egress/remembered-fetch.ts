import type { Env } from "../env";
import { type EgressFailure, type EgressLimits, guardedFetch } from "./guarded-fetch";
import { refusedTarget } from "./target";

/**
 * A GET of a document someone names by URL (a client's metadata document, the key set it points
 * to), through the guard, remembered and throttled so that requests do not turn into fetches one for
 * one:
 *
 * - a document fetched is served from this isolate's memory for `KEEP_FETCHED_MS`, so the steps of
 *   one authorization (consent page, consent, token) make one fetch;
 * - a target that failed is answered as failed for `KEEP_FAILED_MS` without being tried again;
 * - a fetch takes a token from its target's bucket and, when the request that caused it came
 *   through Cloudflare's edge, from its source address's bucket (`CF-Connecting-IP`); an empty
 *   bucket refuses with the time its next token comes back. The buckets live in one `RateLimiter`
 *   object for the deployment, so they hold across isolates; the memory above is per isolate, and
 *   the target's bucket bounds what a flood spread over isolates can cost.
 */

export const EGRESS_LIMITS: EgressLimits = { max_redirects: 3, max_bytes: 64 * 1024, timeout_ms: 5_000 };

export const EGRESS_THROTTLE = {
  per_target: 5,
  per_source: 10,
  window_ms: 60_000,
} as const;

export const KEEP_FETCHED_MS = 60_000;
export const KEEP_FAILED_MS = 60_000;

/** Documents kept at once (at most 64 KiB each); past it memory starts over. */
const MAX_FETCHED = 128;
const MAX_FAILED = 1_024;

/** The limiter object of these buckets; `:` never appears in a tenant's name, so no tenant shares it. */
const LIMITER_NAME = "egress:documents";

export interface FetchedDocument {
  body: Uint8Array;
  content_type: string | null;
  cache_control: string | null;
}

export type DocumentAnswer =
  | { ok: true; document: FetchedDocument }
  | { ok: false; kind: "failed" }
  | { ok: false; kind: "throttled"; retry_after_ms: number };

const fetched = new Map<string, { until: number; document: FetchedDocument }>();
const failed = new Map<string, number>();

/** Forgets every document and failure remembered here, so the next request for each fetches again. */
export function forgetDocuments(): void {
  fetched.clear();
  failed.clear();
}

/** What this isolate remembers of `url`: a document, a failure, or nothing (null). */
export function rememberedDocument(url: string, now: number): DocumentAnswer | null {
  const document = fetched.get(url);
  if (document && document.until > now) return { ok: true, document: document.document };
  const until = failed.get(url);
  if (until !== undefined && until > now) return { ok: false, kind: "failed" };
  return null;
}

export async function fetchDocument(
  env: Env,
  url: string,
  context: { source: string | null; ownHosts: Iterable<string>; now?: number },
): Promise<DocumentAnswer> {
  const now = context.now ?? Date.now();
  const known = rememberedDocument(url, now);
  if (known) return known;
  const ownHosts = [...context.ownHosts];
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  // A target the rules refuse is refused without a token: it costs nothing and sends nothing.
  const refused = parsed ? refusedTarget(parsed, new Set(ownHosts)) : { reason: "not_https" as const };
  if (refused) return fail(url, refused, now);
  const throttled = await takeTokens(env, url, context.source);
  if (throttled) return throttled;
  const answer = await guardedFetch(
    url,
    { headers: { accept: "application/json" } },
    {
      limits: EGRESS_LIMITS,
      ownHosts,
    },
  );
  if (!answer.ok) return fail(url, answer.failure, Date.now());
  const document: FetchedDocument = {
    body: answer.body,
    content_type: answer.headers.get("content-type"),
    cache_control: answer.headers.get("cache-control"),
  };
  if (fetched.size >= MAX_FETCHED) fetched.clear();
  fetched.set(url, { until: Date.now() + KEEP_FETCHED_MS, document });
  return { ok: true, document };
}

function fail(url: string, failure: EgressFailure, now: number): DocumentAnswer {
  console.warn(`egress: ${url.slice(0, 200)} not fetched: ${JSON.stringify(failure)}`);
  if (failed.size >= MAX_FAILED) failed.clear();
  failed.set(url, now + KEEP_FAILED_MS);
  return { ok: false, kind: "failed" };
}

async function takeTokens(env: Env, url: string, source: string | null): Promise<DocumentAnswer | null> {
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(LIMITER_NAME));
  const window_ms = EGRESS_THROTTLE.window_ms;
  const verdict = await limiter.admit([
    { key: `target:${url}`, limit: EGRESS_THROTTLE.per_target, window_ms },
    ...(source ? [{ key: `source:${source}`, limit: EGRESS_THROTTLE.per_source, window_ms }] : []),
  ]);
  return verdict.ok ? null : { ok: false, kind: "throttled", retry_after_ms: verdict.retry_after_ms };
}
