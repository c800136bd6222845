import { Hono } from "hono";
import { app } from "./app";
import type { Env } from "./env";
import { secureResponseHeaders } from "./http/secure-headers";
import { isToolCall } from "./http/tool-call-path";
import { announceCatalog } from "./ledger/catalog-client";
import { withOAuth } from "./oauth/entry";
import { startupCheck } from "./startup";

export { AuditLog } from "./ledger/audit-log";
export { CapPool } from "./ledger/cap-pool";
export { CatalogBeacon } from "./ledger/catalog-beacon";
export { ApprovalDirectory } from "./ledger/directory";
export { EffectShard } from "./ledger/effect-shard";
export { MetricsStore } from "./ledger/metrics-store";
export { RateLimiter } from "./ledger/rate-limiter";
export { RunLedger } from "./ledger/run-ledger";

// OAuth for MCP clients wraps the app: its endpoints and OAuth tokens on /mcp; the rest is the app's.
const withProvider = withOAuth(app.fetch);

/** The Worker's entry: every answer, the OAuth provider's too, gets the security headers. */
const entry = new Hono<{ Bindings: Env }>();
entry.use(secureResponseHeaders);
entry.all("*", async (c) => {
  const { env, executionCtx: ctx } = c;
  // A proxy that refuses to start (a missing secret or binding, a placeholder upstream URL) answers
  // every path, the OAuth provider's included, with the app's envelope saying why.
  let response: Response;
  if (startupCheck(env).problems.length > 0) {
    response = await app.fetch(c.req.raw, env, ctx);
  } else {
    announceCatalog(env, ctx);
    response = await withProvider(c.req.raw, env, ctx);
  }
  // The headers are set on the answer itself; one whose headers are immutable is copied first.
  return response.status === 101 ? response : new Response(response.body, response);
});

export default {
  fetch: (request, env, ctx) => {
    // An agent's tool call skips the OAuth provider's wrapper (its paths are others) and the entry's
    // layer: the app gives it the same headers itself, and answers a refusal to start the same way.
    if (isToolCall(request)) {
      if (startupCheck(env).problems.length === 0) announceCatalog(env, ctx);
      return app.fetch(request, env, ctx);
    }
    return entry.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
