import { Hono } from "hono";
import { environmentOf } from "../config/environment";
import { newCallId } from "../core/ids";
import type { AppEnv } from "../http/app-env";
import { respond } from "../http/respond";
import { defineOperation, envelope, routeOf } from "../specs/operation";
import { catalog } from "../tools";
import { success } from "../wire/envelope";
import type { Health } from "../wire/health";

/** `GET /healthz`: liveness. A proxy that may not serve never reaches it (src/app.ts answers 503). */
export const health = new Hono<AppEnv>();

export const HEALTH = defineOperation({
  method: "get",
  path: "/healthz",
  tag: "meta",
  summary: "Liveness",
  description:
    "Environment name, catalog version and namespaces. A misconfigured proxy answers 500 and says why.",
  credentials: [],
  responses: {
    "200": envelope("The proxy is up.", "Health"),
    "500": envelope("The proxy is misconfigured."),
  },
});

health.on(HEALTH.method, routeOf(HEALTH, ""), async (c) => {
  const answer: Health = {
    status: "ok",
    environment: environmentOf(c.env),
    catalog_version: await catalog.version(),
    namespaces: catalog.namespaces(),
  };
  return respond(c, success({ call_id: newCallId(), environment: environmentOf(c.env) }, answer));
});
