import { app } from "./app";
import type { Env } from "./env";
import { announceCatalog } from "./ledger/catalog-client";
import { withOAuth } from "./oauth/entry";
import { startupCheck } from "./startup";

export { CapPool } from "./ledger/cap-pool";
export { CatalogBeacon } from "./ledger/catalog-beacon";
export { ApprovalDirectory } from "./ledger/directory";
export { EffectShard } from "./ledger/effect-shard";
export { MetricsStore } from "./ledger/metrics-store";
export { RateLimiter } from "./ledger/rate-limiter";
export { RunLedger } from "./ledger/run-ledger";

// OAuth for MCP clients wraps the app: its endpoints and OAuth tokens on /mcp; the rest is the app's.
const withProvider = withOAuth(app.fetch);

export default {
  // A proxy that refuses to start (a missing secret or binding) answers every path, the OAuth
  // provider's included, with the app's envelope saying why.
  fetch: (request, env, ctx) => {
    if (startupCheck(env).problems.length > 0) return app.fetch(request, env, ctx);
    announceCatalog(env, ctx);
    return withProvider(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
