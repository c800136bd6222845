import type { Context, MiddlewareHandler } from "hono";
import { authenticate } from "../auth/authenticate";
import { bearerToken } from "../auth/keys";
import type { Refusal } from "../auth/refusals";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
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

/** Operator routes: an operator key of the tenant; a machine's credential is refused as such (403). */
export const requireOperatorKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const answer = await authenticate(loadConfig(c.env), bearerOf(c), "operator");
  if (!answer.ok) return refuseCredential(c, answer.refusal);
  const { tenant, operator, name, roles } = answer.principal.operator;
  c.set("tenant", tenant);
  c.set("operator", operator);
  c.set("operator_name", name);
  c.set("operator_roles", roles);
  await next();
};
