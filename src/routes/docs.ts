import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { pageSecureHeaders } from "../http/secure-headers";
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

// The page loads nothing: a policy that forbids every fetch proves it and costs nothing.
const docsHeaders = pageSecureHeaders({
  contentSecurityPolicy: { defaultSrc: ["'none'"], styleSrc: ["'unsafe-inline'"] },
});

docs.get("/docs", docsHeaders, (c) => {
  const tenantKey = c.env.ENVIRONMENT === "sandbox" ? SANDBOX_DEMO_TENANT_KEY : TENANT_KEY_PLACEHOLDER;
  return c.html(renderDocsPage(openApiDocument(requestOrigin(c.req.url)), { tenantKey }));
});
