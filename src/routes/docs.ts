import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { renderDocsPage, SANDBOX_DEMO_TENANT_KEY, TENANT_KEY_PLACEHOLDER } from "../specs/docs-page";
import { openApiDocument } from "../specs/openapi";

/**
 * `/openapi.json` and `/docs`: the proxy describing its own HTTP API, no credential needed. Both
 * name the origin they were requested from as the server, built per request (never cached across
 * origins); the page shows the sandbox's demo key only in the sandbox environment.
 */
export const docs = new Hono<AppEnv>();

const requestOrigin = (url: string) => new URL(url).origin;

docs.get("/openapi.json", (c) => c.json(openApiDocument(requestOrigin(c.req.url))));

docs.get("/docs", (c) => {
  const tenantKey = c.env.ENVIRONMENT === "sandbox" ? SANDBOX_DEMO_TENANT_KEY : TENANT_KEY_PLACEHOLDER;
  // The page loads nothing: a policy that forbids every fetch proves it and costs nothing.
  c.header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
  return c.html(renderDocsPage(openApiDocument(requestOrigin(c.req.url)), { tenantKey }));
});
