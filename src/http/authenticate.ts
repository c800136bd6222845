import type { Context, MiddlewareHandler } from "hono";
import { authenticate } from "../auth/authenticate";
import { bearerToken } from "../auth/keys";
import type { Refusal } from "../auth/refusals";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { AUTH_FAILURE_LIMITS, countFailure, sourceWait } from "../ratelimit/auth-failures";
import { failure } from "../wire/envelope";
import type { AppEnv } from "./app-env";
import { requestContext, respond } from "./respond";

/**
 * A refused credential on a REST route: a `permission_error` envelope, 401 when the caller is not
 * known and 403 when a known credential may not do this, with the bearer challenge either way.
 */
export function refuseCredential<E extends { Bindings: Env }>(c: Context<E>, refusal: Refusal) {
  c.header("WWW-Authenticate", 'Bearer realm="edge-tool-proxy"');
  return respond(c, failure(requestContext(c.env), { code: "permission_error", message: refusal.message }), {
    authFailure: refusal.status === 401,
  });
}

function bearerOf(c: Context<AppEnv>) {
  return bearerToken(c.req.header("authorization"));
}

/** `POST /v1/runs`: a tenant key (any of the tenant's namespaces) or an agent key (its profile's namespace and limits). */
export const requireRunOpener: MiddlewareHandler<AppEnv> = async (c, next) => {
  const answer = await authenticate(loadConfig(c.env), bearerOf(c), "run_opener");
  if (!answer.ok) return refuseCredential(c, answer.refusal);
  const opener = answer.principal;
  c.set("tenant", opener.kind === "tenant" ? opener.tenant : opener.agent.tenant);
  c.set("opener", opener);
  await next();
};

/** Routes of one run: a run token signed for exactly this run. */
export const requireRunToken: MiddlewareHandler<AppEnv> = async (c, next) => {
  const answer = await authenticate(loadConfig(c.env), bearerOf(c), "run", { run: c.req.param("run_id") });
  if (!answer.ok) return refuseCredential(c, answer.refusal);
  c.set("tenant", answer.principal.claims.tenant);
  c.set("claims", answer.principal.claims);
  await next();
};

/**
 * Too many failed authentications from this source address or with this key prefix
 * (src/ratelimit/auth-failures.ts): 429, `rate_limited`, with `Retry-After`.
 */
function refuseAttempts<E extends { Bindings: Env }>(c: Context<E>, retryAfterMs: number) {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return respond(
    c,
    failure(requestContext(c.env), {
      code: "rate_limited",
      message: `Too many failed authentications from this address or with keys like this one; try again in ${seconds} s.`,
      retry_after_ms: retryAfterMs,
      details: {
        scope: "authentication_failures",
        per_source: AUTH_FAILURE_LIMITS.per_source,
        per_key_prefix: AUTH_FAILURE_LIMITS.per_key_prefix,
        window_s: AUTH_FAILURE_LIMITS.window_ms / 1000,
      },
    }),
  );
}

/**
 * Operator routes: an operator key of the tenant; a machine's credential is refused as such (403).
 * An unknown key counts as a failed authentication of its source and key prefix; a source over the
 * limit is refused before its key is checked.
 */
export const requireOperatorKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const credential = bearerOf(c);
  const origin = { source: c.req.header("cf-connecting-ip") ?? null, key: credential };
  const waiting = sourceWait(origin);
  if (waiting !== null) return refuseAttempts(c, waiting);
  const answer = await authenticate(loadConfig(c.env), credential, "operator");
  if (!answer.ok) {
    const wait = answer.refusal.reason === "unknown" ? await countFailure(c.env, origin) : null;
    return wait === null ? refuseCredential(c, answer.refusal) : refuseAttempts(c, wait);
  }
  const { tenant, operator, name, roles } = answer.principal.operator;
  c.set("tenant", tenant);
  c.set("operator", operator);
  c.set("operator_name", name);
  c.set("operator_roles", roles);
  await next();
};
