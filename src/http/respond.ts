import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { deprecationHeader, sunsetHeader } from "../catalog/deprecation";
import { environmentOf } from "../config/environment";
import { newCallId } from "../core/ids";
import type { Env } from "../env";
import { type Envelope, type EnvelopeContext, httpStatusFor } from "../wire/envelope";

/** Sends an envelope with the HTTP status that mirrors it and the replay and deprecation headers when they apply. */
export function respond(
  c: Context,
  envelope: Envelope,
  opts: { authFailure?: boolean; status?: number } = {},
) {
  if (envelope.replayed) c.header("Idempotent-Replayed", "true");
  // A deprecated tool's answer: RFC 9745's Deprecation and RFC 8594's Sunset.
  if (envelope.deprecation) {
    c.header("Deprecation", deprecationHeader(envelope.deprecation));
    c.header("Sunset", sunsetHeader(envelope.deprecation));
  }
  if (envelope.error?.retry_after_ms)
    c.header("Retry-After", String(Math.ceil(envelope.error.retry_after_ms / 1000)));
  return c.json(envelope, (opts.status ?? httpStatusFor(envelope, opts)) as ContentfulStatusCode);
}

/** The envelope context of a request that is not a tool call: a fresh id and the environment's name. */
export function requestContext(env: Env): EnvelopeContext {
  return { call_id: newCallId(), environment: environmentOf(env) };
}
