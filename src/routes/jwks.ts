import { Hono } from "hono";
import { loadConfig } from "../config/load";
import { publicJwks } from "../config/signing-keys";
import type { AppEnv } from "../http/app-env";
import { defineOperation, routeOf } from "../specs/operation";

export const JWKS = defineOperation({
  method: "get",
  path: "/.well-known/jwks.json",
  tag: "meta",
  summary: "Upstream credential keys (RFC 7517)",
  description:
    "The public keys the proxy signs upstream credentials with, as a JWK Set, for upstreams to verify them: every configured key, retired ones included, public members only. Cacheable for a few minutes. Not an envelope: the RFC defines the shape.",
  credentials: [],
  notEnvelope: "RFC 7517 defines the JWK Set.",
  responses: { "200": { description: "The JWK Set.", content: { "application/json": {} } } },
});

/**
 * The public keys of upstream credentials (RFC 7517), for upstreams to verify them: every configured
 * key, the retired ones included, public members only. Not an envelope: the RFC defines the shape.
 * Cached briefly, so a key added before it signs reaches upstreams that refresh on this schedule.
 */
export const jwks = new Hono<AppEnv>();

/** How long an upstream may keep the set: a rotation waits this long between its steps. */
export const JWKS_MAX_AGE_S = 300;

jwks.on(JWKS.method, routeOf(JWKS, ""), (c) => {
  c.header("Cache-Control", `public, max-age=${JWKS_MAX_AGE_S}`);
  return c.json(publicJwks(loadConfig(c.env).upstreamSigningKeys));
});

export const AUDIT_JWKS = defineOperation({
  method: "get",
  path: "/.well-known/audit-jwks.json",
  tag: "meta",
  summary: "Audit receipt keys (RFC 7517)",
  description:
    "The public keys the proxy signs audit receipts with (`GET /v1/audit`), as a JWK Set, for anyone to verify an export offline (`npm run audit -- verify`): every configured key, retired ones included, so receipts signed before a rotation keep verifying; public members only. Not an envelope: the RFC defines the shape.",
  credentials: [],
  notEnvelope: "RFC 7517 defines the JWK Set.",
  responses: { "200": { description: "The JWK Set.", content: { "application/json": {} } } },
});

/** The public keys of audit receipts, every configured one (docs/audit.md). */
jwks.on(AUDIT_JWKS.method, routeOf(AUDIT_JWKS, ""), (c) => {
  c.header("Cache-Control", `public, max-age=${JWKS_MAX_AGE_S}`);
  return c.json(publicJwks(loadConfig(c.env).auditSigningKeys));
});
