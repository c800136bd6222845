import type { MiddlewareHandler } from "hono";
import { type CredentialRejection, verifyUpstreamCredential } from "../../src/upstream/credential";
import { type SandboxEnv, storeOf, upstreamKeySet } from "./env";
import { errorResponse } from "./http";
import type { Caller } from "./store";

/**
 * The credential a verified request presented, and whether the request's own log entry has kept it
 * (`logged`): the request lifecycle keeps it in the commit that logs the request.
 */
export interface PresentedCredential {
  token: string;
  logged: boolean;
}

export type AppEnv = {
  Bindings: SandboxEnv;
  Variables: { caller: Caller; credential: PresentedCredential };
};

const REJECTIONS: Record<CredentialRejection | "missing", string> = {
  missing: "Missing credential: send 'Authorization: Bearer <credential>'.",
  malformed: "The credential is malformed.",
  bad_signature: "The credential signature is invalid.",
  unknown_key: "The credential is signed with a key this API does not trust.",
  expired: "The credential has expired.",
  wrong_audience: "The credential was issued for another tool.",
  wrong_request:
    "The credential was issued for another request: its method, target, body or idempotency key differ from this one's.",
};

/**
 * A business endpoint accepts only a proxy-signed credential issued for `tool`, the tool this
 * endpoint serves (the JWT's `aud`): a credential for lookup_order reads orders and cannot create a
 * refund. It is good for the one request it names (method, target, body digest, idempotency key): a
 * leaked refund credential cannot send another amount or another key. The tenant it names (`sub`)
 * scopes every query; its run (`run`) tags what is logged.
 * Rejections are logged too, so a test can see that a forged call reached the upstream and was
 * turned away.
 */
export function requireCredential(tool: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const keys = upstreamKeySet(c.env);
    if (!keys) {
      return errorResponse(
        500,
        "server_misconfigured",
        'UPSTREAM_JWKS must be a JWK Set {"keys": [...]} of the proxy\'s Ed25519 public keys, with no private member.',
      );
    }
    const token = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
    const verdict = token
      ? await verifyUpstreamCredential(token, keys, {
          tool,
          request: {
            method: c.req.method,
            target: targetOf(c.req.url),
            // Hono keeps the body it read, so the route reads these same bytes again.
            body: c.req.method === "GET" || c.req.method === "HEAD" ? null : await c.req.text(),
            idempotency_key: c.req.header("idempotency-key") ?? null,
          },
        })
      : ({ ok: false, reason: "missing" } as const);
    if (!verdict.ok) {
      const meta = {
        tenant: null,
        run_id: null,
        tool: null,
        method: c.req.method,
        path: c.req.path,
        idempotency_key: c.req.header("idempotency-key") ?? null,
        traceparent: c.req.header("traceparent") ?? null,
      };
      await storeOf(c.env).finish(meta, null, 401, null);
      return errorResponse(401, "unauthorized", REJECTIONS[verdict.reason]);
    }
    const { tenant, run, user } = verdict.credential;
    const caller = { tenant, run_id: run, tool, user: user?.sub ?? null };
    c.set("caller", caller);
    // Kept like a leaky upstream's access log would keep it: GET /_admin/credentials replays it. A
    // request served by the lifecycle keeps it in the commit that logs the request; any other route
    // (or a request that failed before its log entry) keeps it here, once it is served.
    const presented: PresentedCredential = { token: token as string, logged: false };
    c.set("credential", presented);
    try {
      await next();
    } finally {
      if (!presented.logged) await storeOf(c.env).recordCredential(caller, presented.token);
    }
  };
}

/** The request's path and query as sent, the form the credential's `htu` names. */
function targetOf(url: string): string {
  const { pathname, search } = new URL(url);
  return `${pathname}${search}`;
}

async function digest(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
}

/** Admin calls need the admin token; a business credential never opens them. */
export const requireAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  const expected = c.env.SANDBOX_ADMIN_TOKEN;
  const given = c.req.header("x-sandbox-admin");
  // Comparing digests keeps the comparison constant-time even when the lengths differ.
  const valid =
    !!expected && !!given && crypto.subtle.timingSafeEqual(await digest(expected), await digest(given));
  if (!valid) return errorResponse(401, "unauthorized", "Missing or invalid X-Sandbox-Admin token.");
  await next();
};
