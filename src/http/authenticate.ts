import type { Context, MiddlewareHandler } from "hono";
import { findAgentKey } from "../auth/agent-keys";
import { bearerToken, findKeyOwner } from "../auth/keys";
import { operatorIdOf } from "../auth/operator-id";
import { operatorNameOf } from "../auth/operator-keys";
import { type RunTokenClaims, verifyRunToken } from "../auth/run-token";
import { loadConfig } from "../config/load";
import { failure } from "../wire/envelope";
import type { AppEnv } from "./app-env";
import { requestContext, respond } from "./respond";

function denied(c: Context<AppEnv>, message: string, authFailure: boolean) {
  c.header("WWW-Authenticate", 'Bearer realm="edge-tool-proxy"');
  return respond(c, failure(requestContext(c.env), { code: "permission_error", message }), { authFailure });
}

/** Routes for an orchestrator: a tenant key, stored hashed, compared in constant time. */
export const requireTenantKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token) return denied(c, "This route needs a tenant key: Authorization: Bearer <tenant key>.", true);
  const tenant = await findKeyOwner(token, loadConfig(c.env).tenantKeyHashes);
  if (!tenant) return denied(c, "The tenant key is not valid.", true);
  c.set("tenant", tenant);
  await next();
};

/**
 * `POST /v1/runs`: a tenant key (an orchestrator, any of the tenant's namespaces) or an agent key
 * (its profile's namespace and limits). Both are stored hashed and compared in constant time.
 */
export const requireRunOpener: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token) {
    return denied(c, "This route needs a tenant key or an agent key: Authorization: Bearer <key>.", true);
  }
  const config = loadConfig(c.env);
  const tenant = await findKeyOwner(token, config.tenantKeyHashes);
  const agent = tenant ? null : await findAgentKey(token, config);
  if (!tenant && !agent) return denied(c, "The tenant key or agent key is not valid.", true);
  c.set("tenant", tenant ?? agent?.tenant ?? "");
  c.set("opener", agent ? { kind: "agent", agent } : { kind: "tenant", tenant: tenant ?? "" });
  await next();
};

/** What a caller is told when its run token is refused, by the reason it was. */
export const RUN_TOKEN_REFUSALS = {
  malformed: "The run token is not valid.",
  bad_signature: "The run token is not valid.",
  expired: "The run token has expired; open a new run.",
} as const;

/** Routes of one run: a run token signed for exactly this run. */
export const requireRunToken: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token) return denied(c, "This route needs the run's token: Authorization: Bearer <run token>.", true);
  const verified = await verifyRunToken(token, loadConfig(c.env).runTokenKeys);
  if (!verified.ok) return denied(c, RUN_TOKEN_REFUSALS[verified.reason], true);
  const claims: RunTokenClaims = verified.payload;
  if (claims.run !== c.req.param("run_id")) {
    return denied(c, "This run token belongs to another run.", false);
  }
  c.set("tenant", claims.tenant);
  c.set("claims", claims);
  await next();
};

/**
 * Operator routes: an operator key of the tenant. A credential of another kind (a run token, a
 * tenant key, an agent key) is recognised and refused as such (403), so a misconfigured client
 * learns why.
 */
export const requireOperatorKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token)
    return denied(c, "This route needs an operator key: Authorization: Bearer <operator key>.", true);
  const config = loadConfig(c.env);
  const tenant = await findKeyOwner(token, config.operatorKeyHashes);
  if (tenant) {
    c.set("tenant", tenant);
    const operator = await operatorIdOf(token);
    c.set("operator", operator);
    c.set("operator_name", operatorNameOf(config.operatorKeys, tenant, operator));
    await next();
    return;
  }
  if ((await verifyRunToken(token, config.runTokenKeys)).ok) {
    return denied(c, "A run token cannot act as an operator; approvals need a human's operator key.", false);
  }
  if (await findKeyOwner(token, config.tenantKeyHashes)) {
    return denied(c, "A tenant key cannot act as an operator; approvals need a human's operator key.", false);
  }
  if (await findAgentKey(token, config)) {
    return denied(c, "An agent key cannot act as an operator; approvals need a human's operator key.", false);
  }
  return denied(c, "The operator key is not valid.", true);
};
