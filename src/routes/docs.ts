import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { pageSecureHeaders } from "../http/secure-headers";
import { METRICS } from "../metrics/route";
import { renderDocsPage, SANDBOX_DEMO_TENANT_KEY, TENANT_KEY_PLACEHOLDER } from "../specs/docs-page";
import { openApiDocumentOf } from "../specs/openapi";
import { defineOperation, type Operation, routeOf } from "../specs/operation";
import { APPROVAL, DECISIONS, LIST_APPROVALS } from "./approvals";
import { AUDIT } from "./audit";
import { HEALTH } from "./health";
import { AUDIT_JWKS, JWKS } from "./jwks";
import { MCP_OPERATIONS } from "./mcp-operations";
import { LIST_RUNS } from "./operator-runs";
import { ADD_RUN_TOOLS, CALL, END_RUN, OPEN_RUN, RESULT_PAGE, RUN_STATUS, TRACE } from "./runs";
import { TOOL_SPECS } from "./tools";
import { VALUE_USAGE } from "./value-usage";

/**
 * `/openapi.json` and `/docs`: the proxy describing its own HTTP API, no credential needed. Both
 * name the origin they were requested from as the server, built per request (never cached across
 * origins); the page shows the sandbox's demo key only in the sandbox environment.
 */
export const docs = new Hono<AppEnv>();

const OPENAPI_JSON = defineOperation({
  method: "get",
  path: "/openapi.json",
  tag: "meta",
  summary: "This document",
  description:
    "The OpenAPI 3.1 description of the proxy's HTTP API. `servers` names the origin the document was requested from.",
  credentials: [],
  notEnvelope: "An OpenAPI document.",
  responses: { "200": { description: "OpenAPI 3.1 JSON.", content: { "application/json": {} } } },
});

const DOCS_PAGE = defineOperation({
  method: "get",
  path: "/docs",
  tag: "meta",
  summary: "API documentation page",
  description: "This document as a self-contained HTML page (no scripts, no external resources).",
  credentials: [],
  notEnvelope: "An HTML page for people.",
  responses: { "200": { description: "HTML.", content: { "text/html": {} } } },
});

/**
 * Every operation of the HTTP API, in the order the document lists them. Each is declared beside
 * its handler, which registers its method and path from it and validates with its schemas; a route
 * left out of this list fails test/workerd/openapi.test.ts, which compares it with the routes served.
 */
export const OPERATIONS: readonly Operation[] = [
  HEALTH,
  OPEN_RUN,
  LIST_RUNS,
  RUN_STATUS,
  CALL,
  TRACE,
  RESULT_PAGE,
  ADD_RUN_TOOLS,
  END_RUN,
  LIST_APPROVALS,
  APPROVAL,
  DECISIONS.approve,
  DECISIONS.reject,
  AUDIT,
  METRICS,
  VALUE_USAGE,
  TOOL_SPECS,
  ...MCP_OPERATIONS,
  JWKS,
  AUDIT_JWKS,
  OPENAPI_JSON,
  DOCS_PAGE,
];

/**
 * Paths served for people, not programs: the operator console and the OAuth consent page are
 * server-rendered HTML behind a sign-in cookie and CSRF tokens, documented in docs/console.md rather
 * than as an API. (OAuth's own endpoints describe themselves in its authorization-server metadata.)
 */
export const UNDOCUMENTED_PREFIXES = ["/console", "/authorize"] as const;

/** The methods and paths the document describes, for checking it against the app's routes. */
export function documentedRoutes(): Array<{ method: string; path: string }> {
  return OPERATIONS.map(({ method, path }) => ({ method: method.toUpperCase(), path }));
}

/**
 * The document for a caller that reached the proxy at `origin`: its one server is that origin.
 *
 * @example
 * openApiDocument("https://proxy.example.com").servers; // [{ url: "https://proxy.example.com", … }]
 */
export const openApiDocument = (origin: string) => openApiDocumentOf(OPERATIONS, origin);

const requestOrigin = (url: string) => new URL(url).origin;

docs.on(OPENAPI_JSON.method, routeOf(OPENAPI_JSON, ""), (c) =>
  c.json(openApiDocument(requestOrigin(c.req.url))),
);

// The page loads nothing: a policy that forbids every fetch proves it and costs nothing.
const docsHeaders = pageSecureHeaders({
  contentSecurityPolicy: { defaultSrc: ["'none'"], styleSrc: ["'unsafe-inline'"] },
});

docs.on(DOCS_PAGE.method, routeOf(DOCS_PAGE, ""), docsHeaders, (c) => {
  const tenantKey = c.env.ENVIRONMENT === "sandbox" ? SANDBOX_DEMO_TENANT_KEY : TENANT_KEY_PLACEHOLDER;
  return c.html(renderDocsPage(openApiDocument(requestOrigin(c.req.url)), { tenantKey }));
});
