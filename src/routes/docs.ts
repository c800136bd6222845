import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { renderDocsPage } from "../specs/docs-page";
import { openApiDocument } from "../specs/openapi";

/** `/openapi.json` and `/docs`: the proxy describing its own HTTP API, no credential needed. */
export const docs = new Hono<AppEnv>();

docs.get("/openapi.json", (c) => c.json(openApiDocument()));

docs.get("/docs", (c) => {
  // The page loads nothing: a policy that forbids every fetch proves it and costs nothing.
  c.header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
  return c.html(renderDocsPage(openApiDocument()));
});
