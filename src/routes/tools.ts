import { type Context, Hono, type MiddlewareHandler } from "hono";
import { bearerToken, findKeyOwner } from "../auth/keys";
import { type RunTokenClaims, verifyRunToken } from "../auth/run-token";
import { loadConfig } from "../config/load";
import type { AppEnv } from "../http/app-env";
import { RUN_TOKEN_REFUSALS } from "../http/authenticate";
import { requestContext, respond } from "../http/respond";
import { validated } from "../http/validation-hook";
import { specsFor } from "../specs/formats";
import { catalog } from "../tools";
import { type Envelope, failure, success } from "../wire/envelope";
import { ToolsQuerySchema } from "../wire/requests";

/** Who asks: a tenant's orchestrator (any namespace of its config) or one run (its namespace only). */
type Caller = { kind: "tenant"; tenant: string } | { kind: "run"; claims: RunTokenClaims };

type ToolsEnv = { Bindings: AppEnv["Bindings"]; Variables: { caller: Caller } };

/** `GET /v1/tools`: ready-to-paste tool specs of one namespace, for the agent framework named by `format`. */
export const tools = new Hono<ToolsEnv>();

/** Stage "authenticate": a run token when the bearer is one, else a tenant key. */
async function identify(c: Context<ToolsEnv>): Promise<Caller | { refusal: string }> {
  const token = bearerToken(c.req.header("authorization"));
  if (!token)
    return { refusal: "This route needs a tenant key or a run token: Authorization: Bearer <key>." };
  const config = loadConfig(c.env);
  const verified = await verifyRunToken(token, config.runTokenKeys);
  if (verified.ok) return { kind: "run", claims: verified.payload };
  // "malformed" means the bearer is not shaped like a run token at all: try it as a tenant key.
  if (verified.reason !== "malformed") return { refusal: RUN_TOKEN_REFUSALS[verified.reason] };
  const tenant = await findKeyOwner(token, config.tenantKeyHashes);
  if (!tenant) return { refusal: "The tenant key or run token is not valid." };
  return { kind: "tenant", tenant };
}

/** The namespaces a caller may see: a run its own, a tenant those of its config that the catalog serves. */
function visibleNamespaces(caller: Caller, c: Context<ToolsEnv>): string[] {
  if (caller.kind === "run") return [caller.claims.ns];
  const tenant = loadConfig(c.env).tenants[caller.tenant];
  return (tenant?.namespaces ?? []).filter((namespace) => catalog.hasNamespace(namespace));
}

/** Authentication comes first: a caller without a credential learns nothing about the query. */
const requireCaller: MiddlewareHandler<ToolsEnv> = async (c, next) => {
  const caller = await identify(c);
  if ("refusal" in caller) {
    c.header("WWW-Authenticate", 'Bearer realm="edge-tool-proxy"');
    return respond(c, failure(requestContext(c.env), { code: "permission_error", message: caller.refusal }), {
      authFailure: true,
    });
  }
  c.set("caller", caller);
  await next();
};

tools.get("/", requireCaller, validated("query", ToolsQuerySchema), async (c) => {
  const ctx = requestContext(c.env);
  const answer = (envelope: Envelope) => respond(c, envelope);
  const caller = c.get("caller");
  const { format, namespace: asked } = c.req.valid("query");
  const visible = visibleNamespaces(caller, c);
  const namespace = asked ?? (caller.kind === "run" ? caller.claims.ns : undefined);
  if (namespace === undefined) {
    return answer(
      failure(ctx, {
        code: "validation_error",
        message: "Name the namespace whose tools you want: ?namespace=<name>.",
        problems: [
          {
            field: "query.namespace",
            reason: "missing required field",
            hint: `A tenant key must name one of: ${visible.join(", ")}.`,
          },
        ],
      }),
    );
  }
  // Exposure control: a namespace the caller may not see answers exactly like one that does not exist.
  if (!visible.includes(namespace)) {
    return answer(
      failure(ctx, {
        code: "not_found",
        message: `Namespace "${namespace}" is not available to this ${caller.kind === "run" ? "run" : "tenant"}.`,
        details: { namespaces: visible },
      }),
    );
  }
  return answer(success(ctx, specsFor(catalog, namespace, format)));
});
