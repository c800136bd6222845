import type { Env } from "../env";
import { applicationTypeProblem } from "./application-type";

/**
 * Bounds on dynamic client registration (RFC 7591, `POST /register`). The provider library stores
 * whatever a client sends for 30 days and does not throttle the endpoint, so without these anyone
 * could register thousands of clients with 200 KB names and thousands of redirect URIs. They are
 * generous for any real client: Claude, Cursor and the MCP SDK register one short name and one or
 * two redirect URIs.
 */
export const REGISTRATION_LIMITS = {
  /** Registrations per client address, refilled evenly over the window. */
  per_address: 10,
  window_ms: 60 * 60 * 1000,
  body_bytes: 16 * 1024,
  client_name_chars: 200,
  redirect_uris: 10,
  redirect_uri_chars: 2_000,
} as const;

/** The one limiter object that counts registrations; `:` never appears in a tenant's name, so no tenant shares it. */
const LIMITER_NAME = "oauth:register";

function oauthError(
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
) {
  return new Response(JSON.stringify({ error, error_description: description }), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });
}

/**
 * What is wrong with a registration's metadata, as RFC 7591 error codes: over a bound, or a redirect
 * URI its `application_type` may not use (src/oauth/application-type.ts); null when nothing is.
 */
export function registrationProblem(body: string): { error: string; description: string } | null {
  if (new TextEncoder().encode(body).length > REGISTRATION_LIMITS.body_bytes) {
    return {
      error: "invalid_client_metadata",
      description: `The registration is over ${REGISTRATION_LIMITS.body_bytes} bytes.`,
    };
  }
  let metadata: unknown;
  try {
    metadata = JSON.parse(body);
  } catch {
    // The provider answers a body that is not JSON with its own error.
    return null;
  }
  if (typeof metadata !== "object" || metadata === null) return null;
  const fields = metadata as Record<string, unknown>;
  const { client_name: name, redirect_uris: uris } = fields;
  if (typeof name === "string" && name.length > REGISTRATION_LIMITS.client_name_chars) {
    return {
      error: "invalid_client_metadata",
      description: `client_name: ${name.length} characters; at most ${REGISTRATION_LIMITS.client_name_chars}.`,
    };
  }
  if (Array.isArray(uris)) {
    if (uris.length > REGISTRATION_LIMITS.redirect_uris) {
      return {
        error: "invalid_redirect_uri",
        description: `redirect_uris: ${uris.length} URIs; at most ${REGISTRATION_LIMITS.redirect_uris}.`,
      };
    }
    const index = uris.findIndex(
      (uri) => typeof uri === "string" && uri.length > REGISTRATION_LIMITS.redirect_uri_chars,
    );
    if (index >= 0) {
      return {
        error: "invalid_redirect_uri",
        description: `redirect_uris[${index}]: longer than ${REGISTRATION_LIMITS.redirect_uri_chars} characters.`,
      };
    }
  }
  return applicationTypeProblem(fields);
}

/**
 * Answers a registration the proxy refuses before the provider sees it (over a bound, or too many
 * from one address), or null to let it through. The address is Cloudflare's `CF-Connecting-IP`,
 * which the edge always sets and a client cannot: a request without it never came through the edge
 * (a test calling the worker directly), and is not counted.
 */
export async function refuseRegistration(request: Request, env: Env): Promise<Response | null> {
  const problem = registrationProblem(await request.clone().text());
  if (problem) return oauthError(400, problem.error, problem.description);
  const address = request.headers.get("cf-connecting-ip");
  if (!address) return null;
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(LIMITER_NAME));
  const verdict = await limiter.admit([
    {
      key: `register:${address}`,
      limit: REGISTRATION_LIMITS.per_address,
      window_ms: REGISTRATION_LIMITS.window_ms,
    },
  ]);
  if (verdict.ok) return null;
  const seconds = Math.max(1, Math.ceil(verdict.retry_after_ms / 1_000));
  return oauthError(
    429,
    "too_many_requests",
    `At most ${REGISTRATION_LIMITS.per_address} client registrations an hour from one address; try again in ${seconds} s.`,
    { "retry-after": String(seconds) },
  );
}
