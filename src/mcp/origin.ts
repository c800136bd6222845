import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/app-env";
import { rpcError } from "./json-rpc";

/**
 * Streamable HTTP: a server MUST validate a request's `Origin` and answer one present and invalid
 * with 403, so a page on a rebound DNS name cannot drive a local server. The proxy sends no CORS
 * headers, so no page of another origin could read its answers anyway: the one origin taken is the
 * proxy's own. Agents outside a browser send no `Origin`, and are not asked for one.
 */
export const ownOriginOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  const origin = c.req.header("origin");
  if (origin === undefined || origin === new URL(c.req.url).origin) return next();
  const message = `Forbidden: requests from the origin ${JSON.stringify(origin.slice(0, 200))} are not accepted. Call /mcp from a server or agent runtime (no Origin), or from this proxy's own origin.`;
  return rpcError(403, -32600, message, null);
};
