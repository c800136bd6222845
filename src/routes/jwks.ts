import { Hono } from "hono";
import { loadConfig } from "../config/load";
import type { AppEnv } from "../http/app-env";
import { publicJwks } from "../upstream/signing-keys";

export const JWKS_PATH = "/.well-known/jwks.json";

/**
 * The public keys of upstream credentials (RFC 7517), for upstreams to verify them: every configured
 * key, the retired ones included, public members only. Not an envelope: the RFC defines the shape.
 * Cached briefly, so a key added before it signs reaches upstreams that refresh on this schedule.
 */
export const jwks = new Hono<AppEnv>();

/** How long an upstream may keep the set: a rotation waits this long between its steps. */
export const JWKS_MAX_AGE_S = 300;

jwks.get(JWKS_PATH, (c) => {
  c.header("Cache-Control", `public, max-age=${JWKS_MAX_AGE_S}`);
  return c.json(publicJwks(loadConfig(c.env).upstreamSigningKeys));
});
