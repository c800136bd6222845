import { app } from "./app";
import type { Env } from "./env";
import { withOAuth } from "./oauth/entry";

export { ApprovalDirectory } from "./approvals/directory";
export { RunLedger } from "./ledger/run-ledger";
export { RateLimiter } from "./ratelimit/rate-limiter";

export default {
  // OAuth for MCP clients wraps the app: its endpoints and OAuth tokens on /mcp; the rest is the app's.
  fetch: withOAuth(app.fetch),
} satisfies ExportedHandler<Env>;
