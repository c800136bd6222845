import { type Context, Hono, type MiddlewareHandler } from "hono";
import { authenticate } from "../auth/authenticate";
import { bearerToken } from "../auth/keys";
import type { PrincipalOf } from "../auth/principal";
import { loadConfig } from "../config/load";
import type { AppEnv } from "../http/app-env";
import { refuseCredential } from "../http/authenticate";
import { requestContext, respond } from "../http/respond";
import { validated } from "../http/validation-hook";
import { ledgerFor } from "../ledger/client";
import { specsFor } from "../specs/formats";
import { defineOperation, envelope, FAILURES, routeOf } from "../specs/operation";
import { runSpecs } from "../specs/tool-specs";
import { catalog } from "../tools";
import { type Envelope, failure, success } from "../wire/envelope";
import { toolsQuerySchema } from "../wire/requests";

/** Who asks: a tenant's orchestrator (any namespace of its config) or one run (its namespace only). */
type ToolsEnv = { Bindings: AppEnv["Bindings"]; Variables: { principal: PrincipalOf<"tool_specs"> } };

/** `GET /v1/tools`: ready-to-paste tool specs of one namespace, for the agent framework named by `format`. */
export const tools = new Hono<ToolsEnv>();

/** The namespaces a caller may see: a run its own, a tenant those of its config that the catalog serves. */
function visibleNamespaces(principal: PrincipalOf<"tool_specs">, c: Context<ToolsEnv>): string[] {
  if (principal.kind === "run") return [principal.claims.ns];
  const tenant = loadConfig(c.env).tenants[principal.tenant];
  return (tenant?.namespaces ?? []).filter((namespace) => catalog.hasNamespace(namespace));
}

/** Authentication comes first: a caller without a credential learns nothing about the query. */
const requireRunOrTenant: MiddlewareHandler<ToolsEnv> = async (c, next) => {
  const answer = await authenticate(
    loadConfig(c.env),
    bearerToken(c.req.header("authorization")),
    "tool_specs",
  );
  if (!answer.ok) return refuseCredential(c, answer.refusal);
  c.set("principal", answer.principal);
  await next();
};

export const TOOL_SPECS = defineOperation({
  method: "get",
  path: "/v1/tools",
  tag: "tools",
  summary: "Tool specs for an agent framework",
  description:
    "Ready-to-paste specs of one namespace, generated from the tools' zod schemas, with an approximate token cost. A run token sees only its own namespace; a tenant key the namespaces of its config. Any other namespace is `not_found`.",
  credentials: ["tenantKey", "runToken"],
  query: toolsQuerySchema,
  responses: {
    "200": envelope("The specs.", "NamespaceSpecs"),
    "401": FAILURES["401"],
    "404": envelope("The namespace is not available to this caller (`not_found`)."),
    "422": envelope("Unknown format, unknown parameter or missing namespace (`validation_error`)."),
  },
});

tools.on(
  TOOL_SPECS.method,
  routeOf(TOOL_SPECS, "/v1/tools"),
  requireRunOrTenant,
  validated("query", TOOL_SPECS.query),
  async (c) => {
    const ctx = requestContext(c.env);
    const answer = (envelope: Envelope) => respond(c, envelope);
    const principal = c.get("principal");
    const { format, namespace: asked } = c.req.valid("query");
    const visible = visibleNamespaces(principal, c);
    const namespace = asked ?? (principal.kind === "run" ? principal.claims.ns : undefined);
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
          message: `Namespace "${namespace}" is not available to this ${principal.kind === "run" ? "run" : "tenant"}.`,
          details: { namespaces: visible },
        }),
      );
    }
    if (principal.kind === "run") {
      // A run's export is its own set: the subset it opened with and the tools added since.
      const { claims } = principal;
      const set = await ledgerFor(c.env, claims.tenant, claims.run).toolSet(claims.tenant);
      return answer(success(ctx, runSpecs(set ?? { namespace, tools: claims.tools ?? null }, format)));
    }
    return answer(success(ctx, specsFor(catalog, namespace, format)));
  },
);
